#!/usr/bin/env bash
# Round 23: 128-token tiles with 4-window stages (default) vs 2 (VELLUM_CUDA_DET16_SW=2): checks, kernel bench at 256
# and 2 048 rows, the deterministic BF16 quick bench.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
[ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1 &
for S in 4 2; do
  export VELLUM_CUDA_DET16_SW=$S
  timeout 150 $C --det-only > $O/chk-$S.txt 2>&1; echo "stage windows $S checks: $(grep -E 'checks,' $O/chk-$S.txt | tail -1)"; grep FAIL $O/chk-$S.txt | head -3
  for R in 256 2048; do VELLUM_DET16_BENCH_ROWS=$R timeout 100 $C --det16-bench 2>&1 | grep "^det16" | awk '!seen[$0]++' | cut -c1-120; done
done
wait
for S in 4 2; do
  G=$O/bench-$S.log
  VELLUM_CUDA_DET16_SW=$S VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --deterministic --model /tmp/l8b-BF16.gguf > $G 2>&1
  echo "stage windows $S: $(grep -E '^decode (64|128|256) seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.*/\1: \2/' | sort -u | tr '\n' ' ')"
done
