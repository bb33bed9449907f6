#!/usr/bin/env bash
# Round 26, call 7: the bulk-copy GEMM at 129..256 token rows of the 14 336-long weights
# (VELLUM_CUDA_DQ_TMA=1) against the defaults before it, end to end: the quick bench of llama3-8b
# Q4_K_M (batch 1, aggregate decode at 1k context, prefill), alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for r in 1 2; do
  q off$r Q4_K_M VELLUM_CUDA_DQ_TMA=0
  q tma$r Q4_K_M VELLUM_CUDA_DQ_TMA=1
done
cat $O/quick.txt
