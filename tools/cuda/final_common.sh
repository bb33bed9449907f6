# Sourced by the final-call scripts (final16.sh, final17.sh; D = their folder, which holds the
# stripped vellum and vellum_cuda_check, lib/, fixtures/, run5.sh and stories_greedy.py).
# final_checks: run5.sh's checks (every op vs the CPU, stories260K greedy, graphs vs eager, CPU vs GPU
# greedy) and the deterministic mode's batch invariance, summed up in $O/final.txt, while llama3-8b
# Q4_K_M and BF16 (or SYNTH_TYPES) are synthesized into /tmp/l8b-TYPE.gguf. q LABEL TYPE ENV...: the quick bench
# (batch 1, aggregate decode at 1k, prefill) with ENV, one line into $O/quick.txt. proof and e2e: the
# round-21 scripts' `vellum proof` and `vellum bench` runs.
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
final_checks() {
  (for T in ${SYNTH_TYPES:-Q4_K_M BF16}; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
  bash $D/run5.sh checks > $O/run5.txt 2>&1
  timeout 120 $C --invariance /tmp/q.gguf 2>$O/inv.log | grep -E "invarian|checks," > $O/inv.txt
  { tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-240;
    cat $O/inv.txt; } > $O/final.txt
  wait
}
q() {
  local L=$1 T=$2; shift 2
  G=$O/quick-$T-$L.log
  env "$@" VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf 2>$G >/dev/null
  echo "$T $L: b1 $(grep 'decode batch 1' $G | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens \[default' $G | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
}
# proof LABEL MODEL ARGS...: `vellum proof` on the GPU of the prompts in $T/p.txt (T: the caller's
# folder), its verdict on one line.
proof() {
  local L=$1 MM=$2; shift 2
  timeout 200 $V proof -m $MM --device cuda --prompts $T/p.txt --ignore-eos "$@" > $O/proof-$L.txt 2>&1; echo "proof $L (exit $?): $(grep -iE 'identical|differ|match' $O/proof-$L.txt | tail -2 | tr '\n' ' ')"
}
# e2e LABEL ARGS...: `vellum bench --step-profile` of $M (the caller's model) on the GPU, its tables.
e2e() {
  local L=$1; shift
  timeout 300 $V bench -m $M --device cuda -r 1 --max-num-seqs 256 --step-profile "$@" > $O/e2e-$L.txt 2> $O/e2e-$L.log || tail -2 $O/e2e-$L.log
  echo "== $L: $*"; sed -n '/^| batch/,$p' $O/e2e-$L.txt | grep -v -- '| ---' | cut -c1-200
}
