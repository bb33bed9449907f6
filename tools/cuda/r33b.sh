#!/usr/bin/env bash
# Round 33, call 2: call 1's grouped-launch failure (dq checks at 300 rows, 64-token tiles; the plan
# bench) with the new error detail; --dq-only and --plan-bench again.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
dq_checks "dq_tma group" > /tmp/dq.txt
grep -c PASS $O/dq-check.txt >> $S; head -3 /tmp/dq.txt >> $S; grep -c "dq_tma group" /tmp/dq.txt >> $S
grep "dq_tma group" /tmp/dq.txt | grep FAIL | head -20 >> $S
timeout 200 $C --plan-bench > $O/plans.txt 2>/tmp/plans.log; echo "plan bench exit $?" >> $S; tail -3 /tmp/plans.log >> $S
cat $S; echo; cut -c1-250 $O/plans.txt
