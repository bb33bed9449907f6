#!/usr/bin/env bash
# Round 46, call 9: the final main with the Q4_K SwiGLU at 1 pass a warp by default: --multi-only,
# --graphs on llama3.2-1b Q4_K_M (graphs vs eager, the layer kernel vs its ops, the row norm),
# stories260K greedy, and llama3-8b Q4_K_M batch 1 once.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 100 $C --multi-only > $O/multi.txt 2>&1; echo "multi checks (exit $?): $(tail -1 $O/multi.txt)" >> $S
grep -E "FAIL" $O/multi.txt | cut -c1-200 | head -5 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1
grep -E "graphs vs|kernel vs|row norm vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-230 >> $S
TS=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $TS/s.gguf > /dev/null
python3 $D/stories_greedy.py $V $TS/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1 >> $S
wait
b1 main Q4_K_M
echo "[${SECONDS}s] done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
