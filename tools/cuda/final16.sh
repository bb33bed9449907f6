#!/usr/bin/env bash
# Round 16 final call: the committed binary's checks (run5.sh: every op vs the CPU, stories260K
# greedy, graphs vs eager, CPU vs GPU greedy; the deterministic mode's batch invariance), then the
# quick llama3-8b bench (batch 1, aggregate decode at 1k context, prefill) with the norm kernel at
# 256 threads (round 15) and 512 (the new default), the same binary. Run next to the stripped
# vellum, vellum_cuda_check, lib/, fixtures/, run5.sh and stories_greedy.py.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
(for T in Q4_K_M BF16; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
timeout 120 $C --invariance /tmp/q.gguf 2>$O/inv.log | grep -E "invarian|checks," > $O/inv.txt
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-200;
  cat $O/inv.txt; } > $O/final.txt
wait
q() {  # label, type, env...
  local L=$1 T=$2; shift 2
  G=$O/quick-$T-$L.log
  env "$@" VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf 2>$G >/dev/null
  echo "$T $L: b1 $(grep 'decode batch 1' $G | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens \[default' $G | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
}
for T in Q4_K_M BF16; do
  q nt256 $T VELLUM_CUDA_NORM_THREADS=256
  q nt512 $T X=1
done
cat $O/final.txt $O/quick.txt
