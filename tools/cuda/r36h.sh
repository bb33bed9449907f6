#!/usr/bin/env bash
# Round 36, call 8: the review's refactor (RsBarriers / rs_begin, store_part; the same operations,
# rescheduled SASS): --dq-only and --tail-rows-only on the final binary.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
timeout 150 $C --dq-only > $O/dq-check.txt 2>&1; echo "dq checks (exit $?): $(tail -1 $O/dq-check.txt)" >> $S
grep FAIL $O/dq-check.txt | head -5 >> $S
timeout 100 $C --tail-rows-only > $O/tail.txt 2>&1; echo "tail checks (exit $?): $(tail -1 $O/tail.txt)" >> $S
grep FAIL $O/tail.txt | head -5 >> $S
cat $S
