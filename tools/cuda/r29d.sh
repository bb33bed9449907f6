#!/usr/bin/env bash
# Round 29, call 4: is the one-row kernel's post-wait time its own or the memory system's? Batch-1
# decode of llama3-8b Q4_K_M (graphs + PDL) with and without the GEMVs (VELLUM_CUDA_ABLATE=16: the
# next GEMV's early weight loads then do not share the memory system with the attention), each with
# the kernel whole, leaving after its wait (DBG 1), without its post-wait q / k / v loads (DBG 32)
# and without its merge (DBG 8); the unfused step likewise (ABLATE 16 vs 20).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
"$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for R in 1 2; do
  for A in 0 16; do
    b1 a$A-fused-$R Q4_K_M VELLUM_CUDA_ABLATE=$A
    for B in 1 32 8 40; do b1 a$A-dbg$B-$R Q4_K_M VELLUM_CUDA_ABLATE=$A VELLUM_CUDA_ROPE_ATTN_DBG=$B; done
  done
  b1 a16-off-$R Q4_K_M VELLUM_CUDA_ABLATE=16 VELLUM_CUDA_ROPE_ATTN=0
  b1 a20-off-$R Q4_K_M VELLUM_CUDA_ABLATE=20 VELLUM_CUDA_ROPE_ATTN=0
  b1 a22-off-$R Q4_K_M VELLUM_CUDA_ABLATE=22 VELLUM_CUDA_ROPE_ATTN=0
done
cat $O/b1.txt
