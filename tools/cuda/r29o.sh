#!/usr/bin/env bash
# Round 29, call 15: do multi-row decode graphs lose to their padding too? End to end (`vellum bench`,
# the engine's scheduler and graphs) on llama3-8b's shape in Q4_K_M (deepseek-llm's vocabulary):
# 128-token prompts, 256 new tokens, 8, 64 and 256 sequences (contexts 129-384), the default (multi-row
# steps padded to 1 024 positions) against VELLUM_CUDA_GRAPH_MIN_POSITIONS=256, alternating. That knob
# was in this call's binary only (no difference measured; not kept).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
M=/tmp/l8b-Q4_K_M.gguf
$V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > /dev/null 2>&1
S=$O/summary.txt
for r in 1 2; do
  e2e default-$r -p 128 -n 256 -b 8,64,256 >> $S
  VELLUM_CUDA_GRAPH_MIN_POSITIONS=256 e2e min256-$r -p 128 -n 256 -b 8,64,256 >> $S
done
cat $S
