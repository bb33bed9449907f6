#!/usr/bin/env bash
# Round 23 (ran against commit 2e84d93, whose binary read VELLUM_CUDA_DET16_WPP; main has no such knob since: parts
# are 16 windows for weights of <= 8 192 rows, 32 above): parts of 16 windows vs 32, checks, kernel bench at 1 row, batch 1.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
[ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1 &
for W in 16 32; do
  export VELLUM_CUDA_DET16_WPP=$W
  timeout 150 $C --det-only > $O/chk-$W.txt 2>&1; echo "wpp $W checks: $(grep -E 'checks,' $O/chk-$W.txt | tail -1)"
  VELLUM_DET16_BENCH_ROWS=1 timeout 100 $C --det16-bench 2>&1 | grep "^det16" | awk '!seen[$0]++' | cut -c1-110
  wait
  VELLUM_BENCH_QUICK=1 timeout 120 $C --only-bench --batch1-only --deterministic --model /tmp/l8b-BF16.gguf > $O/b1-$W.txt 2>&1
  echo "wpp $W b1: $(grep 'decode batch 1' $O/b1-$W.txt | grep '\[graphs on\]' | tail -1 | sed -E 's/.*\]: //' | cut -c1-60)"
done
