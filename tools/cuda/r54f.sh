#!/usr/bin/env bash
# Round 54, call 7: the decode attention in a decode graph's class of 64 spans (2 049-4 096
# positions) at 4-12 sequences: the blocks rule (default) against round 7's kernel forced
# (VELLUM_CUDA_ATTN_DECODE=2), llama3-8b Q4_K_M after 2 048 and 4 000 tokens, two alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M
for r in 1 2; do
  for CTX in 2048 4000; do
    seqs def$r-$CTX Q4_K_M 4,6,8,12 VELLUM_BENCH_SEQ_CTX=$CTX
    seqs r7$r-$CTX Q4_K_M 4,6,8,12 VELLUM_BENCH_SEQ_CTX=$CTX VELLUM_CUDA_ATTN_DECODE=2
  done
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log && rm -f seqs-*.log
cat $S
