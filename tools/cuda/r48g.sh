#!/usr/bin/env bash
# Round 48, call 7 (the final binary): the staged producer the default for Q4_K / Q6_K output
# projections (8 warps of 4 rows; no block barrier before the wait any more). Every op against the
# CPU, stories260K greedy, graphs vs eager, CPU vs GPU greedy, the invariance check (final_checks);
# --norm-out-only; --graphs on llama3.2-1b Q4_K_M; batch 1 Q4_K_M default vs
# VELLUM_CUDA_NORM_OUT_STAGED=0 (three alternating rounds) and Q8_0 (its path unchanged).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
echo "[${SECONDS}s] checks done" >> $S
cat $O/final.txt >> $S
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 200 $C --graphs /tmp/p4.gguf > $O/graphs-p4.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs-p4.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
for i in 1 2 3; do
  b1 default Q4_K_M
  b1 staged0 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=0
done
b1 default Q8_0
b1 default Q8_0
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
