#!/usr/bin/env bash
# Round 35, call 7: after the review (the bulk add behind set_dq_tma_bulk_add, bit 2's plain bulk
# copies removed): the many-row tail checks both ways, the dq checks, graphs vs eager.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
timeout 120 $C --tail-rows-only > $O/tail.txt 2>&1; echo "tail checks (exit $?): $(tail -1 $O/tail.txt)"
grep -E "FAIL|bulk adds vs" $O/tail.txt | cut -c1-150
dq_checks
