#!/usr/bin/env bash
# Round 52, call 6 (the final binary): the quick bench of llama3-8b Q4_K_M and Q8_0 (batch 1, aggregate
# decode at 1k context 1-256 sequences, prefill 512 / 2 048), and 2-16 sequences fused vs off once more.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0
echo "[${SECONDS}s] synth" >> $S
q final Q4_K_M
q final Q8_0
cat $O/quick.txt >> $S
echo "[${SECONDS}s]" >> $S
seqs fused Q4_K_M 2,3,4,6,8,12,16
seqs off Q4_K_M 2,3,4,6,8,12,16 VELLUM_CUDA_ROWS_FUSED=0
echo "[${SECONDS}s]" >> $S
# What is left of the call: the op table (every op against the CPU) until its timeout, each check
# logged on stderr as it runs (call 5 lost this log).
timeout ${OPS_S:-150} $C 2> $O/check.log > $O/check_table.txt
echo "[${SECONDS}s] op table (exit $?): $(grep -c PASS $O/check.log) pass, $(grep -c FAIL $O/check.log) fail logged; last: $(grep -E 'PASS|FAIL' $O/check.log | tail -1 | cut -c1-120)" >> $S
grep FAIL $O/check.log | cut -c1-200 | head -10 >> $S
cd $O && tar czf logs.tgz quick-*.log seqs-*.log check.log && rm -f quick-*.log seqs-*.log check.log check_table.txt
cat $S
