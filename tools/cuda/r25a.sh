#!/usr/bin/env bash
# Round 25, call 1: the L2 prefetch on a side branch of one-row steps (VELLUM_CUDA_L2_PREFETCH_*).
# Correctness with it on (stories260K greedy, graphs vs eager, CPU vs GPU greedy), then batch-1 decode
# of llama3-8b Q4_K_M / Q8_0 / BF16 with the prefetch off and in several shapes, alternating.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0 BF16; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
export VELLUM_CUDA_L2_PREFETCH_MIB=16
model_checks
unset VELLUM_CUDA_L2_PREFETCH_MIB
wait
P=VELLUM_CUDA_L2_PREFETCH_MIB
b1 off Q4_K_M $P=0
b1 16M Q4_K_M $P=16
b1 8M Q4_K_M $P=8
b1 32M Q4_K_M $P=32
b1 off Q4_K_M $P=0
b1 16M-lines Q4_K_M $P=16 VELLUM_CUDA_L2_PREFETCH_LINES=1
b1 16M-depth3 Q4_K_M $P=16 VELLUM_CUDA_L2_PREFETCH_DEPTH=3
b1 16M-direct Q4_K_M $P=16 VELLUM_CUDA_L2_PREFETCH_DIRECT=1
b1 16M-64blk Q4_K_M $P=16 VELLUM_CUDA_L2_PREFETCH_BLOCKS=64
b1 16M-4blk-64K Q4_K_M $P=16 VELLUM_CUDA_L2_PREFETCH_BLOCKS=4 VELLUM_CUDA_L2_PREFETCH_PIECE_KB=64
b1 16M Q4_K_M $P=16
b1 off Q8_0 $P=0
b1 16M Q8_0 $P=16
b1 32M Q8_0 $P=32
b1 off BF16 $P=0
b1 16M BF16 $P=16
b1 32M BF16 $P=32
cat $O/b1.txt
