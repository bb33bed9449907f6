#!/usr/bin/env bash
# Round 49, call 11: after the review's refactor (af5ec3f: the one-row attention's kernel picked by
# pointer for the launch and the occupancy query): --attn-clusters, --attn-only, --graphs on
# llama3.2-1b Q4_K_M, and llama3-8b Q4_K_M batch 1 after 16 and 600 tokens.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 30 $C --attn-clusters 2>&1 | grep "one-row" >> $S
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
b1 ctx16 Q4_K_M
b1 ctx600 Q4_K_M VELLUM_BENCH_B1_CTX=600
rm -f $O/attn.txt $O/graphs.txt
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
