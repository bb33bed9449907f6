#!/usr/bin/env bash
# Round 42, call 6: where gemv_mma's final kernel waits (Q4_K 14 336 x 4 096 at 8 rows, the 4-warp
# shape; Q8_0 the same weight): ncu's stall samples per SASS instruction and the instructions with
# excessive shared-memory wavefronts / global sectors. No product change.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K Q8_0; do
  VELLUM_BENCH_MMA_ROWS=8 VELLUM_BENCH_GEMV_TYPES=$T VELLUM_BENCH_MMA_ONLY=1 timeout 150 ncu --clock-control none -k "regex:gemv_mma_kernel" --launch-skip 3 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight --page source --print-source sass --csv $C --only-bench --gemv-only > /tmp/src-$T.csv 2>/tmp/src.err
  echo "== $T (exit $?)" >> $S; tail -1 /tmp/src.err >> $S
  python3 $D/ncu_stalls.py /tmp/src-$T.csv 25 >> $S 2>&1
  python3 $D/ncu_excess.py /tmp/src-$T.csv >> $S 2>&1
  gzip -c /tmp/src-$T.csv > $O/src-$T.csv.gz
done
cat $S
