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
# det_proofs TYPE...: per type, a synthetic llama3.2-1b (deepseek-llm's vocabulary): `vellum proof --deterministic`
# of 8 prompts, 1 sequence vs 8 with a 96-token budget; the invariance check; deterministic graphs vs eager.
det_proofs() {
  printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
  for T in "$@"; do
    $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
    timeout 150 $V proof -m /tmp/p.gguf --device cuda --deterministic --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 96" > $O/proof-$T.txt 2>&1
    echo "proof $T --deterministic, 1 seq vs 8 with a 96-token budget (exit $?): $(grep -iE 'identical|differ' $O/proof-$T.txt | tail -1 | cut -c1-150)"
    timeout 120 $C --invariance /tmp/p.gguf 2>/dev/null | grep -E "deterministic model" | head -1 | cut -c1-200
    timeout 120 $C --deterministic --graphs /tmp/p.gguf 2>/dev/null | grep -E "graphs vs eager" | head -1 | cut -c1-220
  done
}
# ---- round 25 -----------------------------------------------------------------------------------
# b1 LABEL TYPE ENV...: batch-1 decode of /tmp/l8b-TYPE.gguf (eager, and graphs + PDL) with ENV, one
# line (with the bench's L2 prefetch and graph stats line, where the binary prints one) into $O/b1.txt.
b1() {
  local L=$1 TY=$2; shift 2
  local G=/tmp/b1-$TY-$L.log
  env "$@" timeout 100 $C --only-bench --batch1-only --model /tmp/l8b-$TY.gguf > $G 2>/dev/null
  echo "$TY $L: eager $(grep 'decode batch 1' $G | grep 'graphs off' | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') graphs $(grep 'decode batch 1' $G | grep 'graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') | $(grep 'L2 prefetch' $G | sed -E 's/.*prefetch: //' | cut -c1-190)" >> $O/b1.txt
}
# model_checks: stories260K greedy against run.c's reference, graphs vs eager, CPU vs GPU greedy
# (qwen2.5-0.5b F16), --graphs on llama3.2-1b Q4_K_M (the layer kernel against the ops too), a line each.
model_checks() {
  local T=$(mktemp -d)
  $V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
  python3 $D/stories_greedy.py $V $T/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1
  timeout 60 $C --graphs $T/s.gguf 2>&1 | tail -1
  $V gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1
  timeout 150 $C --compare /tmp/q.gguf --graphs /tmp/q.gguf 2>/tmp/compare.log | grep -E "greedy|graphs vs|checks," | cut -c1-200
  # Round 30: a Q4_K_M model, where --graphs also compares the opt-in layer kernel with the ops
  # (every verdict line: round 30 found that one failing unseen behind a "graphs vs" grep).
  $V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|kernel vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-220
}
# attn_checks: --attn-only and --det-only, model_checks and det_proofs BF16, a line each.
attn_checks() {
  timeout 200 $C --attn-only > /tmp/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn-check.txt)"
  grep FAIL /tmp/attn-check.txt | head -5
  timeout 200 $C --det-only > /tmp/det-check.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 /tmp/det-check.txt)"
  model_checks
  det_proofs BF16 2>&1
}
# attn_prefill LABEL BINARY [ENV...]: the tensor-core prefill attention (--prefill-attn-only) on one line.
attn_prefill() {
  local L=$1 X=$2; shift 2
  env "$@" timeout 120 $X --prefill-attn-only > /tmp/pa-$L.txt 2>&1
  echo "$L: $(grep "prefill attention" /tmp/pa-$L.txt | sort -u | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores ([0-9.]+) ms \(([0-9]+) TFLOP\/s\).*/\2 \1 \3 ms (\4)/" | tr '\n' ';')"
}
# model_prefill LABEL BINARY TYPE [FLAGS...]: prefill 512 / 2 048 of /tmp/l8b-TYPE.gguf (the default path
# twice) with the GEMM peak, on one line.
model_prefill() {
  local L=$1 X=$2 TY=$3; shift 3
  local G=/tmp/prefill-$L-$TY.log
  VELLUM_BENCH_QUICK=1 timeout 150 $X --only-bench --skip-op-bench --prefill-only "$@" --model /tmp/l8b-$TY.gguf > $G 2>&1
  echo "$TY $L: $(grep -E 'GEMM 8192|prefill [0-9]+ tokens' $G | sort -u | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/; s/.*GEMM 8192.*: ([0-9.]+) TFLOP.*/peak \1/' | tr '\n' ' ')"
}
# ---- round 26 -----------------------------------------------------------------------------------
# dq_checks [PATTERN]: --dq-only (the many-row quantized matmul checks), its verdict and its failures
# (and the lines matching PATTERN), a line each.
dq_checks() {
  timeout 300 $C --dq-only > $O/dq-check.txt 2>&1; echo "dq checks (exit $?): $(tail -1 $O/dq-check.txt)"
  grep -E "FAIL${1:+|$1}" $O/dq-check.txt | cut -c1-200 | head -40
}
# ---- round 51 -----------------------------------------------------------------------------------
# seqs LABEL TYPE SEQS ENV...: aggregate decode at 1k context of /tmp/l8b-TYPE.gguf (greedy, graphs on,
# no prefill; VELLUM_BENCH_SEQS=SEQS) with ENV: one line "TYPE LABEL: N:ms/step:tok/s ..." into $S.
seqs() {
  local L=$1 TY=$2 N=$3; shift 3
  env "$@" VELLUM_BENCH_QUICK=1 VELLUM_BENCH_PREFILL=0 VELLUM_BENCH_SEQS=$N timeout 200 $C --only-bench --skip-op-bench --model /tmp/l8b-$TY.gguf > $O/seqs-$TY-$L.log 2>&1
  echo "$TY $L: $(grep -E '^decode [0-9]+ seqs' $O/seqs-$TY-$L.log | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\2ms:\3/' | awk '!s[$0]++' | tr '\n' ' ')" >> $S
}
# checks FILE REGEX [EXCLUDE]: distinct checks of a vellum_cuda_check log whose name matches REGEX and
# that passed (the log prints each check twice: as it runs and in the closing table); EXCLUDE drops
# lines that match it (e.g. '0 cluster launch').
checks() {
  grep -E "$2" "$1" | grep PASS | { if [ -n "${3:-}" ]; then grep -v -- "$3"; else cat; fi; } |
    sed -E 's/ err .*| +[0-9.e+-]+ +[0-9e+-]+ +PASS.*//' | sort -u | wc -l
}
# ---- round 52 -----------------------------------------------------------------------------------
# begin_call: the stripped binaries beside the caller ($D) unpacked, and S = $O/summary.txt begun with the GPU's name.
begin_call() {
  for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
  S=$O/summary.txt
  nvidia-smi -L > $S
}
# synth_l8b TYPE...: synthetic llama3-8b models /tmp/l8b-TYPE.gguf (about 35 s each).
synth_l8b() {
  for T in "$@"; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
}
# rows_fused_checks: --rows-fused-only, its verdict, failures and distinct passing checks, into $S.
rows_fused_checks() {
  timeout 300 $C --rows-fused-only > $O/rows-fused.txt 2>&1; echo "[${SECONDS}s] rows fused checks (exit $?): $(tail -1 $O/rows-fused.txt)" >> $S
  grep -E "FAIL" $O/rows-fused.txt | sed -E 's/ +/ /g' | cut -c1-250 | head -12 >> $S
  echo "rows fused: $(checks $O/rows-fused.txt 'rows fused') distinct checks pass, $(checks $O/rows-fused.txt "norm's int8 copy") of them the norm copies" >> $S
}
# fused_vs_off TYPE FUSED_SEQS OFF_SEQS: two alternating rounds of seqs with round 52's fused launches
# (labels fused1, fused2) and without them (off1, off2; VELLUM_CUDA_ROWS_FUSED=0).
fused_vs_off() {
  for r in 1 2; do
    seqs fused$r $1 $2
    seqs off$r $1 $3 VELLUM_CUDA_ROWS_FUSED=0
  done
}
# ---- round 53 -----------------------------------------------------------------------------------
# graphs_1b TYPE: --graphs on a synthetic llama3.2-1b of TYPE (deepseek-llm's vocabulary), its verdict
# and its comparison lines (graphs vs eager, the layer kernel, rows fused vs unfused) into $S.
graphs_1b() {
  $V gguf synth --preset llama3.2-1b --type $1 --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/g-$1.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/g-$1.gguf > $O/graphs-$1.txt 2>&1
  echo "[${SECONDS}s] --graphs llama3.2-1b $1 (exit $?): $(tail -1 $O/graphs-$1.txt)" >> $S
  grep -E "rows fused vs|graphs vs|kernel vs|FAIL" $O/graphs-$1.txt | grep -v " err " | sed -E 's/ +/ /g' | cut -c1-260 >> $S
}
# flag_checks FLAG NAME [TIMEOUT]: vellum_cuda_check FLAG (e.g. --mma-x-only) into $O/NAME.txt, its
# verdict and its failures into $S.
flag_checks() {
  timeout ${3:-200} $C $1 > $O/$2.txt 2>&1; echo "[${SECONDS}s] $2 checks (exit $?): $(tail -1 $O/$2.txt)" >> $S
  grep FAIL $O/$2.txt | sed -E 's/ +/ /g' | cut -c1-220 | head -10 >> $S
}
# ---- round 54 -----------------------------------------------------------------------------------
# plan_bench ROWS: --plan-bench at these token rows (VELLUM_BENCH_PLAN_ROWS), its lines into $S (the
# default plan, then the forced ones), the log in $O/plans.txt.
plan_bench() {
  VELLUM_BENCH_PLAN_ROWS=$1 timeout 150 $C --plan-bench > $O/plans.txt 2>&1; echo "[${SECONDS}s] plan bench at $1 rows (exit $?)" >> $S
  grep -E "^plans" $O/plans.txt | sed -E 's/ +/ /g' >> $S
}
