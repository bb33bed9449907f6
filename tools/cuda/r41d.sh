#!/usr/bin/env bash
# (VELLUM_CUDA_GEMV_MMA_KW existed in this call's binary only: removed after the round.)
# Round 41, call 4: gemv_mma v3 (warps a block chosen so that every block is resident at once). (1)
# The kernel alone with the rule and with 8 / 4 warps a block forced (VELLUM_CUDA_GEMV_MMA_KW);
# (2) --graphs on llama3.2-1b Q4_K_M (4-row steps); (3) llama3-8b Q4_K_M and Q8_0 quick bench: the
# kernel from 2 rows (VELLUM_CUDA_GEMV_MMA_MIN=2), the default thresholds, off.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
 "$D/vellum" gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1) &
for KW in 0 8 4; do
  VELLUM_CUDA_GEMV_MMA_KW=$KW VELLUM_BENCH_MMA_ONLY=1 timeout 200 $C --only-bench --gemv-only > /tmp/mma-$KW.txt 2>/dev/null
  echo "mma bench KW=$KW exit $?" >> $S
  grep -E "^gemv mma" /tmp/mma-$KW.txt | sed -E 's/ of copy bw//; s/ \| max .*//' >> $S
done
left bench done
wait
echo "Q4_K_M graphs: $(timeout 200 $C --graphs /tmp/p-Q4_K_M.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | head -1)" >> $S
left graphs done
for T in Q4_K_M Q8_0; do
  q min2 $T VELLUM_CUDA_GEMV_MMA_MIN=2; q default $T; q off $T VELLUM_CUDA_GEMV_MMA=0
done
cat $O/quick.txt >> $S
left quick done
rm -f $O/*.log
cat $S
