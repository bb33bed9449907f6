#!/usr/bin/env bash
# Round 22: the deterministic mode's tensor-core rows (rows_mma). checks: op checks (--det-only), the
# kernel alone against the rows GEMV, `vellum proof --deterministic` one sequence at a time vs 8 with
# a 32-token budget (llama3.2-1b shape, Q4_K_M and Q8_0). bench TYPE...: the quick model bench in
# the deterministic mode, rows_mma off (VELLUM_CUDA_ROWS_MMA=0) and by type (-1, the default).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
MODE=${1:-checks}; shift || true
nvidia-smi -L
if [ "$MODE" = checks ]; then
  timeout 200 $C --det-only > $O/det_checks.txt 2>$O/det_checks.log; echo "det checks exit $?"
  tail -1 $O/det_checks.txt; grep -E "deterministic" $O/det_checks.txt | cut -c1-230
  timeout 200 $C --rows-mma-bench > $O/rows_bench.txt 2>/dev/null; echo "rows bench exit $?"
  grep -E "^rows_mma" $O/rows_bench.txt | cut -c1-200
  printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
  for T in Q4_K_M Q8_0; do
    $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
    timeout 200 $V proof -m /tmp/p.gguf --device cuda --deterministic --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 32" > $O/proof-$T.txt 2>&1
    echo "proof $T det (exit $?): $(grep -iE 'identical|differ' $O/proof-$T.txt | tail -2 | tr '\n' ' ' | cut -c1-200)"
  done
elif [ "$MODE" = bench ]; then
  for T in "$@"; do
    [ -f /tmp/l8b-$T.gguf ] || $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1
    for R in 0 -1; do
      G=$O/detbench-$T-$R.log
      VELLUM_CUDA_ROWS_MMA=$R VELLUM_BENCH_QUICK=1 timeout 250 $C --only-bench --skip-op-bench --deterministic --model /tmp/l8b-$T.gguf > $G 2>&1
      echo "$T rows_mma=$R (exit $?): b1 $(grep 'decode batch 1' $G | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')"
    done
  done
fi
