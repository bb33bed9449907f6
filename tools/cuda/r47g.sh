#!/usr/bin/env bash
# Round 47, call 7 (commit b6d9f15; the kernel was removed after it): the Q6_K producer held to 56 registers (VELLUM_CUDA_NORM_OUT_CAP=1), so that one
# block of the next layer's Q/K/V fits beside it and loads its first pass early: --norm-out-only with
# it (every shape bit for bit with the plain launch), --graphs on llama3.2-1b Q4_K_M with it, and
# llama3-8b Q4_K_M batch 1, three alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
VELLUM_CUDA_NORM_OUT_CAP=1 timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks, cap (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "Q6_K.*R 1|FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_NORM_OUT_CAP=1 timeout 200 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1
echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M, cap (exit $?)" >> $S
grep -E "graphs vs|kernel vs|row norm vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
wait
for i in 1 2 3; do
  b1 main Q4_K_M
  b1 cap Q4_K_M VELLUM_CUDA_NORM_OUT_CAP=1
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
