#!/bin/bash
# Round 53, call 9 (the final binary, the last device minutes): the op table (every op against the CPU)
# for as long as the budget allows; check.log lists each check as it runs, so a cut run still counts.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
timeout 370 $C 2>$O/check.log > $O/check_table.txt; echo "[${SECONDS}s] op table (exit $?): $(tail -1 $O/check_table.txt)" >> $S
echo "op checks logged: $(grep -c PASS $O/check.log) pass, $(grep -c FAIL $O/check.log) fail" >> $S
grep FAIL $O/check.log | cut -c1-200 | head -10 >> $S
cd $O && tar czf logs.tgz check_table.txt check.log && rm -f check_table.txt check.log
cat $S
