#!/usr/bin/env bash
# Round 25, call 9: the deterministic mode's BF16 prefill (llama3-8b, 512 / 2 048 tokens) with its attention
# on the split path (default) and on tensor cores (VELLUM_CUDA_DET_ATTN_TC=1), final commit, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
for r in 1 2; do
  for tc in 0 1; do export VELLUM_CUDA_DET_ATTN_TC=$tc; model_prefill "det-attention-tc=$tc" $C BF16 --deterministic; done
done
