#!/bin/bash
# Round 53, call 5: which decode attention kernel 2-64 sequences should take at 1k and 2k context
# (llama3-8b Q4_K_M, graphs): the default rule (round 5's kernel to 8 rows, then round 7's or round
# 14's by blocks) against round 7's (variant 2) and round 14's 3-stage kernel (5) forced, alternating.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
synth_l8b Q4_K_M
for ctx in 1024 2048; do
  for r in 1 2; do
    seqs def-$ctx-$r Q4_K_M 2,3,4,6,8,12,16,24,32,64 VELLUM_BENCH_SEQ_CTX=$ctx
    seqs v2-$ctx-$r Q4_K_M 2,3,4,6,8,12,16,24,32,64 VELLUM_BENCH_SEQ_CTX=$ctx VELLUM_CUDA_ATTN_DECODE=2
    seqs v5-$ctx-$r Q4_K_M 2,3,4,6,8,12,16,24,32,64 VELLUM_BENCH_SEQ_CTX=$ctx VELLUM_CUDA_ATTN_DECODE=5
  done
  echo "[${SECONDS}s]" >> $S
done
cd $O && tar czf seqs.tgz seqs-*.log && rm -f seqs-*.log
cat $S
