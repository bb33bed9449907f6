#!/usr/bin/env bash
# Round 47, call 6: Q8_0's producers (output and down projections with the norm's copy) as 32 warps of
# one row (VELLUM_CUDA_ROW_NORM_R=1, the Q4_K / Q6_K producers' shape) instead of 16 warps of two:
# --norm-out-only (every shape bit for bit with the plain launch), --graphs on llama3.2-1b Q8_0 with
# it, and llama3-8b Q8_0 batch 1, three alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1 &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "Q8_0.*R 1|FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
$V gguf synth --preset llama3.2-1b --type Q8_0 --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p8.gguf > /dev/null 2>&1
VELLUM_CUDA_ROW_NORM_R=1 timeout 200 $C --graphs /tmp/p8.gguf > $O/graphs.txt 2>&1
echo "[${SECONDS}s] --graphs llama3.2-1b Q8_0, R 1 (exit $?)" >> $S
grep -E "graphs vs|row norm vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
wait
for i in 1 2 3; do
  b1 main Q8_0
  b1 R1 Q8_0 VELLUM_CUDA_ROW_NORM_R=1
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
