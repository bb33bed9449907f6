#!/usr/bin/env bash
# Round 30, call 9: where a batch-1 token goes now (VELLUM_CUDA_ABLATE skips a class of batch-1
# kernels; results wrong, timing only): 1 norms, 8 x quantization, 6 RoPE + attention, 15 all but the
# GEMVs, 16 the GEMVs. Any ablation bit but 16 turns round 29's one-row attention kernel off, so
# "rope-attn off" (VELLUM_CUDA_ROPE_ATTN=0) is their baseline. llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
for T in Q4_K_M Q8_0; do [ -f /tmp/l8b-$T.gguf ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
rm -f $O/b1.txt
for T in Q4_K_M Q8_0; do
  b1 default $T
  b1 rope-attn-off $T VELLUM_CUDA_ROPE_ATTN=0
  for A in 1 8 6 15 16; do b1 ablate$A $T VELLUM_CUDA_ABLATE=$A; done
done
cat $O/b1.txt
