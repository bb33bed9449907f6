#!/usr/bin/env bash
# Round 25, call 3: why the side-branch prefetch costs: a near-empty prefetch (the branch's nodes alone),
# full vs programmatic fork edges (VELLUM_CUDA_L2_PREFETCH_FULL), wait first vs early issue (_EARLY).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M BF16; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done)
P=VELLUM_CUDA_L2_PREFETCH_MIB; DE=VELLUM_CUDA_L2_PREFETCH_DEPTH; F=VELLUM_CUDA_L2_PREFETCH_FULL; E=VELLUM_CUDA_L2_PREFETCH_EARLY
for r in 1 2; do
  b1 off Q4_K_M $P=0
  b1 16M Q4_K_M $P=16 $DE=1
  b1 16K Q4_K_M $P=0.016 $DE=1
  b1 16M-full Q4_K_M $P=16 $DE=1 $F=1
  b1 16K-full Q4_K_M $P=0.016 $DE=1 $F=1
  b1 16M-early Q4_K_M $P=16 $DE=1 $E=1
  b1 16M-early-full Q4_K_M $P=16 $DE=1 $E=1 $F=1
done
b1 off BF16 $P=0
b1 16M-full BF16 $P=16 $DE=1 $F=1
b1 16K-full BF16 $P=0.016 $DE=1 $F=1
cat $O/b1.txt
