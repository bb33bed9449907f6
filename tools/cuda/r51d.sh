#!/usr/bin/env bash
# Round 51, call 4: which path 9..32 token rows take, end to end (llama3-8b Q4_K_M and Q8_0,
# aggregate decode at 1k, greedy, graphs): the tiled rows kernel up to 16 rows then dq_tma from 17
# (a), the tiled kernel up to 32 (b), up to 16 then round 50's dq_mma (c), round 50's paths (d).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0
echo "[${SECONDS}s] synth" >> $S
for T in Q4_K_M Q8_0; do
  seqs a-mma16-tma17 $T 12,16,20,24,32 VELLUM_CUDA_GEMV_MMA_MAX=16 VELLUM_CUDA_DQ_TMA_MIN=17
  seqs b-mma32 $T 12,16,20,24,32
  seqs c-mma16-dqmma $T 12,16,20,24,32 VELLUM_CUDA_GEMV_MMA_MAX=16
  seqs d-round50 $T 12,16,20,24,32 VELLUM_CUDA_GEMV_MMA_MAX=8
  seqs a2-mma16-tma17 $T 12,16,20,24,32 VELLUM_CUDA_GEMV_MMA_MAX=16 VELLUM_CUDA_DQ_TMA_MIN=17
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log && rm -f seqs-*.log
cat $S
