#!/usr/bin/env bash
# Round 51, call 6 (knobs only, the final binary): 2-3 sequences on the int8 tensor-core rows kernel
# (VELLUM_CUDA_GEMV_MMA_MIN=2) against the rows GEMV; the decode attention's variants and chunks a
# block at 16 / 32 sequences (VELLUM_CUDA_ATTN_DECODE, VELLUM_CUDA_ATTN_SPB). llama3-8b Q4_K_M at 1k.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0
echo "[${SECONDS}s] synth" >> $S
for T in Q4_K_M Q8_0; do
  seqs rows $T 2,3
  seqs mma2 $T 2,3 VELLUM_CUDA_GEMV_MMA_MIN=2
  seqs rows-again $T 2,3
done
seqs attn-default Q4_K_M 16,32
seqs attn-v2 Q4_K_M 16,32 VELLUM_CUDA_ATTN_DECODE=2
seqs attn-v5 Q4_K_M 16,32 VELLUM_CUDA_ATTN_DECODE=5
seqs attn-spb1 Q4_K_M 16,32 VELLUM_CUDA_ATTN_SPB=1
seqs attn-spb2 Q4_K_M 16,32 VELLUM_CUDA_ATTN_SPB=2
seqs attn-default-again Q4_K_M 16,32
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log && rm -f seqs-*.log
cat $S
