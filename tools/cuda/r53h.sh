#!/bin/bash
# Round 53, call 8: round 5's decode attention kernel merging the rows of a 2-3-row launch itself (no
# combine kernel; VELLUM_CUDA_ATTN_V1_FUSE=0 restores the combine kernel): --attn-only, --graphs on
# llama3.2-1b Q4_K_M, and llama3-8b at 2-3 sequences against the combine kernel, alternating.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
(synth_l8b Q4_K_M Q8_0) &
flag_checks --attn-only attn 250
graphs_1b Q4_K_M
wait
for r in 1 2 3; do
  seqs fuse$r Q4_K_M 2,3
  seqs comb$r Q4_K_M 2,3 VELLUM_CUDA_ATTN_V1_FUSE=0
done
for r in 1 2; do
  seqs fuse$r Q8_0 2,3
  seqs comb$r Q8_0 2,3 VELLUM_CUDA_ATTN_V1_FUSE=0
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log attn.txt graphs-*.txt && rm -f seqs-*.log attn.txt graphs-*.txt
cat $S
