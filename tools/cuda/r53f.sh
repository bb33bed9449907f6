#!/bin/bash
# Round 53, call 6: the attention rule (round 7's kernel at 4-12 rows, round 5's to 3) and the
# attention's int8 rows for the output projection at 2-16 rows. Checks: --rows-fused-only (the
# quantize kernel now shares quantize_mma_warp with the attention), --attn-only, model_checks (with
# --graphs' new rows fused vs unfused comparison and 2-row phase). Then llama3-8b at 1k context:
# the new default against the copy off (VELLUM_CUDA_ATTN_Q8_ROWS=0) and round 52's kernel choice
# (round 5's at 4-8 rows, round 14's at 12-16: forced), alternating.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
(synth_l8b Q4_K_M Q8_0) &
rows_fused_checks
flag_checks --attn-only attn 250
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks" >> $S
wait
for r in 1 2; do
  seqs new$r Q4_K_M 2,3,4,6,8,12,16
  seqs noq8_$r Q4_K_M 2,3,4,6,8,12,16 VELLUM_CUDA_ATTN_Q8_ROWS=0
  seqs r5_$r Q4_K_M 4,6,8 VELLUM_CUDA_ATTN_DECODE=1
  seqs r14_$r Q4_K_M 12,16 VELLUM_CUDA_ATTN_DECODE=4
done
for r in 1 2; do
  seqs new$r Q8_0 2,3,4,8,12,16
  seqs noq8_$r Q8_0 2,3,4,8,12,16 VELLUM_CUDA_ATTN_Q8_ROWS=0
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log attn.txt rows-fused.txt && rm -f seqs-*.log attn.txt rows-fused.txt
cat $S
