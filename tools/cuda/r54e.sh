#!/usr/bin/env bash
# Round 54, call 6: dq_rows with K split by 8 super-blocks (2 splits at k = 4 096, 7 at 14 336):
# --plan-bench at 24 / 32 rows, aggregate decode at 20 / 32 sequences, and the SwiGLU pair launch's
# stalls by SASS line under ncu.
# Needs the binaries built with tools/cuda/results/r54-dq-rows.patch applied (--dq-rows-only, VELLUM_CUDA_DQ_ROWS_MAX).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
export PATH=/usr/local/cuda/bin:$PATH
synth_l8b Q4_K_M &
plan_bench 24,32
wait
seqs rows Q4_K_M 20,32
VELLUM_PROFILE_SEQS=32 timeout 120 ncu --profile-from-start off --clock-control none -k "regex:dq_rows_kernel" --launch-skip 6 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/src.csv 2>/tmp/src.err
echo "== pair stalls by SASS line (exit $?)" >> $S
python3 $D/ncu_stalls.py /tmp/src.csv 40 >> $S 2>&1
gzip -c /tmp/src.csv > $O/src-pair.csv.gz
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz plans.txt seqs-*.log && rm -f plans.txt
cat $S
