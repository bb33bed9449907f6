#!/usr/bin/env bash
# Round 28, call 15: CUDA graphs against eager steps (--graphs: 1, 4, 20 and 40 sequences, bit for
# bit) on quantized models whose matmuls reach the register-A kernel (40 rows; llama3.2-1b's 2 048
# and 8 192 columns are multiples of 256), Q4_K_M and Q8_0 with deepseek-llm's vocabulary.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T: $(timeout 150 $C --graphs /tmp/p-$T.gguf 2>/dev/null | grep -E 'graphs vs eager' | head -1 | cut -c1-230)"
done
