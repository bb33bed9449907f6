#!/usr/bin/env bash
# Round 28, call 13: end to end (`vellum bench`, the engine's scheduler and graphs) on llama3-8b's
# shape in Q4_K_M (deepseek-llm's 102 400-token vocabulary, as round 21), the default (the register-A kernel at 33..1 024 rows) against
# VELLUM_CUDA_DQ_TMA=0, alternating: decode-heavy (128-token prompts, 256 new tokens, 64 and 256
# sequences) and prefill-heavy (512-token prompts, 32 new tokens, 64 sequences).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
M=/tmp/l8b-Q4_K_M.gguf
$V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > /dev/null 2>&1
S=$O/summary.txt
for r in 1 2; do
  e2e default-decode-$r -p 128 -n 256 -b 64,256 >> $S
  VELLUM_CUDA_DQ_TMA=0 e2e off-decode-$r -p 128 -n 256 -b 64,256 >> $S
done
e2e default-prefill -p 512 -n 32 -b 64 >> $S
VELLUM_CUDA_DQ_TMA=0 e2e off-prefill -p 512 -n 32 -b 64 >> $S
cat $S
