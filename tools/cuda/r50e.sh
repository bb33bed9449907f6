#!/usr/bin/env bash
# Round 50, call 5: the Q4_K / Q6_K launches' passes as a ring (a slot refilled as soon as it is
# summed; the same bits) and the down projection as 16 warps of 2 rows and 2 / 4 passes
# (VELLUM_CUDA_ROW_NORM_R=22 / 24): --norm-out-only, --multi-only, --graphs on llama3.2-1b Q4_K_M, and
# llama3-8b Q4_K_M batch 1 after 16 tokens against the previous binary (vellum_cuda_check_base).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vellum_cuda_check_base; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 100 $C --norm-out-only > $O/no.txt 2>&1; echo "[${SECONDS}s] --norm-out-only (exit $?): $(tail -1 $O/no.txt)" >> $S
grep -E "FAIL" $O/no.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
grep -E " R 2[24]" $O/no.txt | sed -E 's/ +/ /g' | cut -c1-160 | head -8 >> $S
timeout 100 $C --multi-only > $O/multi.txt 2>&1; echo "[${SECONDS}s] --multi-only (exit $?): $(tail -1 $O/multi.txt)" >> $S
grep -E "FAIL" $O/multi.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
CR=$C
for r in 1 2; do
  C=$D/vellum_cuda_check_base; b1 base Q4_K_M; C=$CR
  b1 ring Q4_K_M
  b1 ring-R22 Q4_K_M VELLUM_CUDA_ROW_NORM_R=22
  b1 ring-R24 Q4_K_M VELLUM_CUDA_ROW_NORM_R=24
  b1 ring-R22-unstaged Q4_K_M VELLUM_CUDA_ROW_NORM_R=22 VELLUM_CUDA_NORM_OUT_STAGED=0
  b1 ring-swigluP2 Q4_K_M VELLUM_CUDA_KQ_SWIGLU_P=2
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz no.txt multi.txt graphs.txt && rm -f no.txt multi.txt graphs.txt
cat $S
