#!/usr/bin/env bash
# Round 44, call 4: the int8 tensor-core rows kernel (4-8 token rows) with each super-block's x side
# staged in the warps' rings beside the weights (VELLUM_CUDA_MMA_STAGE_X=1): the kernel alone against
# the unstaged one (time and bits) at 2 / 4 / 6 / 8 rows, then llama3-8b Q4_K_M and Q8_0 decode at 4 and
# 8 sequences (1k context) with it off and on, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
VELLUM_BENCH_MMA_ONLY=1 timeout 200 $C --only-bench --gemv-only > $O/mma.txt 2>&1
grep -E "^gemv mma" $O/mma.txt | sed -E 's/ \| rows GEMV.*//' | cut -c1-150
wait
for i in 1 2; do
  for T in Q4_K_M Q8_0; do
    for X in 0 1; do
      G=$O/seqs-$T-$X-$i.log
      VELLUM_CUDA_MMA_STAGE_X=$X VELLUM_BENCH_SEQS=4,8 VELLUM_BENCH_PREFILL=0 VELLUM_BENCH_QUICK=1 timeout 150 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf > $G 2>&1
      echo "$T stage_x=$X: $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ')"
    done
  done
done
