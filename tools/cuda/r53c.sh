#!/bin/bash
# Round 53, call 3: llama3-8b Q8_0 at 16-32 sequences, the wide kernel (default shape and 4 warps a
# block) against round 52's dq_tma (VELLUM_CUDA_GEMV_MMA_MAX=16), alternating.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
synth_l8b Q8_0
echo "[${SECONDS}s] synth" >> $S
for r in 1 2; do
  seqs wide$r Q8_0 16,20,24,32
  seqs tma$r Q8_0 16,20,24,32 VELLUM_CUDA_GEMV_MMA_MAX=16
done
seqs wide4 Q8_0 20,32 VELLUM_CUDA_MMA_WIDE=4
seqs wide8 Q8_0 20,32 VELLUM_CUDA_MMA_WIDE=8
echo "[${SECONDS}s]" >> $S
cat $S
