#!/usr/bin/env bash
# Round 29, call 3: where the one-row kernel's slot in a batch-1 step goes. Batch-1 decode of
# llama3-8b Q4_K_M (graphs + PDL) with VELLUM_CUDA_ROPE_ATTN_DBG bits (results wrong, timing only:
# 1 leave after the wait, 2 no K/V loads before it, 4 no angles, 8 no merge, 16 no scores or sums),
# against the unfused step and the step with RoPE and attention skipped (VELLUM_CUDA_ABLATE=6).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
for R in 1 2; do
  b1 off$R Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
  b1 fused$R Q4_K_M
  for B in 1 2 4 8 16 7 24; do b1 dbg$B-$R Q4_K_M VELLUM_CUDA_ROPE_ATTN_DBG=$B; done
  b1 ablate6-$R Q4_K_M VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=6
done
for T in Q8_0; do
  b1 off Q8_0 VELLUM_CUDA_ROPE_ATTN=0
  b1 fused Q8_0
  b1 dbg1 Q8_0 VELLUM_CUDA_ROPE_ATTN_DBG=1
  b1 ablate6 Q8_0 VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=6
done
cat $O/b1.txt
