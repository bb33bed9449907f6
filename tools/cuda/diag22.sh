#!/usr/bin/env bash
# Round 22, call 1: where a Q4_K_M batch-1 token's time goes on this H100.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv
[ -f /tmp/l8b-Q4_K_M.gguf ] || $V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for A in 0 16 15 4 1; do
  VELLUM_CUDA_ABLATE=$A VELLUM_BENCH_QUICK=1 timeout 120 $C --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf > $O/b1-$A.txt 2>&1
  echo "ablate $A: $(grep 'decode batch 1' $O/b1-$A.txt | tail -1 | cut -c1-200)"
done
