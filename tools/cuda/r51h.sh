#!/usr/bin/env bash
# Round 51, call 8: the span merge's arithmetic shared by merge_head and cluster_merge (merge_spans):
# --attn-only (variant 6 vs 4 bit for bit, every kernel against the CPU); --attn-bench (the decode
# kernels' variants at 1k-32k, the prefill attention), for the rule that picks the decode variant.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
echo "long kernel 6 vs 4: $(checks $O/attn.txt 'long kernel 6 vs 4') pass, $(checks $O/attn.txt 'long kernel 6 vs 4' '0 cluster launch') with a cluster launch" >> $S
timeout 250 $C --attn-bench > $O/bench.txt 2>&1; echo "[${SECONDS}s] --attn-bench (exit $?)" >> $S
grep -E "copy|paged decode attention|prefill attention" $O/bench.txt | awk '!s[$0]++' | cut -c1-400 >> $S
cd $O && tar czf logs.tgz attn.txt bench.txt && rm -f attn.txt bench.txt
cat $S
