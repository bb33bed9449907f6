#!/usr/bin/env bash
# Round 54, call 8 (the final binary): round 7's decode attention for up to 4 rows in the class of
# 64 spans (kAttnRound7LongRows). --attn-only, --graphs on llama3.2-1b Q4_K_M, and llama3-8b Q4_K_M
# at 4 / 6 sequences after 2 048 and 4 000 tokens (6 keeps the blocks rule).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M &
timeout 220 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
wait
for CTX in 2048 4000; do seqs final-$CTX Q4_K_M 4,6 VELLUM_BENCH_SEQ_CTX=$CTX; done
graphs_1b Q4_K_M
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz attn.txt seqs-*.log graphs-*.txt && rm -f attn.txt seqs-*.log graphs-*.txt
cat $S
