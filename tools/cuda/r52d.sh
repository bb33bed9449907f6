#!/usr/bin/env bash
# Round 52, call 4: the norms write the fused launches' int8 rows copy; the Q4_K rows kernel's scale
# loads issued with its quants. Checks (--rows-fused-only with the norm copies, --mma-x-only,
# --multi-only, the model checks, the deterministic mode's invariance and proofs), then aggregate
# decode at 1k context, 1-16 sequences, fused vs off, alternating.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0 &
rows_fused_checks
flag_checks --mma-x-only mma-x
flag_checks --multi-only multi
wait
echo "[${SECONDS}s] synth" >> $S
fused_vs_off Q4_K_M 1,2,3,4,8,12,16 1,2,3,4,8,12,16
fused_vs_off Q8_0 1,2,3,4,8,12,16 2,3,4,8,12,16
echo "[${SECONDS}s]" >> $S
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks" >> $S
det_proofs Q4_K_M Q8_0 >> $S 2>&1
echo "[${SECONDS}s] deterministic" >> $S
cd $O && tar czf logs.tgz rows-fused.txt mma-x.txt multi.txt seqs-*.log proof-*.txt && rm -f rows-fused.txt mma-x.txt multi.txt seqs-*.log proof-*.txt
cat $S
