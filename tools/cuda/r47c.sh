#!/usr/bin/env bash
# Round 47, call 3 (branch r47-down-qkv, kept as tools/cuda/results/r47-down-qkv.patch): the down projection and the next layer's Q/K/V in one launch with a grid barrier
# (launch_gemv_down_qkv, VELLUM_CUDA_DOWN_QKV=1): --down-qkv-only (bit for bit against the two
# launches), --graphs on llama3.2-1b Q4_K_M (the model with it against without, graphs vs eager),
# and llama3-8b Q4_K_M batch 1, three alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 150 $C --down-qkv-only > $O/dq.txt 2>&1; echo "[${SECONDS}s] down + Q/K/V checks (exit $?): $(tail -1 $O/dq.txt)" >> $S
grep -E "in one launch" $O/dq.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 200 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1
echo "[${SECONDS}s] --graphs (exit $?)" >> $S
grep -E "graphs vs|kernel vs|row norm vs|one launch vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
wait
for i in 1 2 3; do
  b1 main Q4_K_M
  b1 downqkv Q4_K_M VELLUM_CUDA_DOWN_QKV=1
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
