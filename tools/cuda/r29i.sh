#!/usr/bin/env bash
# Round 29, call 9: the angles computed only by the blocks that use them. Batch-1 decode of llama3-8b
# Q4_K_M (graphs + PDL): the kernel whole, leaving after its wait (DBG 1), the unfused step
# (VELLUM_CUDA_ROPE_ATTN=0), and RoPE + attention skipped (the unfused step with VELLUM_CUDA_ABLATE=6).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
"$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for R in 1 2; do
  b1 fused$R Q4_K_M
  b1 dbg1-$R Q4_K_M VELLUM_CUDA_ROPE_ATTN_DBG=1
  b1 off$R Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
  b1 ablate6-$R Q4_K_M VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=6
done
cat $O/b1.txt
