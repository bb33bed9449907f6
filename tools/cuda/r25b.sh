#!/usr/bin/env bash
# Round 25, call 2: the L2 prefetch issued after its GEMV has finished (the wait first), graphs only.
# Batch-1 decode of llama3-8b Q4_K_M / BF16 / Q8_0, prefetch off and on (budget, depth), alternating;
# one line a run into $O/b1.txt.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M BF16 Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
export VELLUM_CUDA_L2_PREFETCH_MIB=16
model_checks > $O/b1.txt
unset VELLUM_CUDA_L2_PREFETCH_MIB
wait
P=VELLUM_CUDA_L2_PREFETCH_MIB; DE=VELLUM_CUDA_L2_PREFETCH_DEPTH
for r in 1 2; do
  b1 off Q4_K_M $P=0
  b1 16M-d1 Q4_K_M $P=16 $DE=1
  b1 16M-d2 Q4_K_M $P=16 $DE=2
  b1 8M-d1 Q4_K_M $P=8 $DE=1
  b1 32M-d1 Q4_K_M $P=32 $DE=1
done
b1 off BF16 $P=0
b1 16M-d1 BF16 $P=16 $DE=1
b1 32M-d1 BF16 $P=32 $DE=1
b1 off Q8_0 $P=0
b1 16M-d1 Q8_0 $P=16 $DE=1
b1 32M-d1 Q8_0 $P=32 $DE=1
cat $O/b1.txt
