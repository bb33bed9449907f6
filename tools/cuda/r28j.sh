#!/usr/bin/env bash
# Round 28, call 12 (needs branch r28-smem-a's binary; measured, not kept): the multiplying warpgroups store their dequantized
# A fragments into two shared-memory A tiles and multiply in the SS form (VELLUM_CUDA_DQ_TMA_SMEMA=1)
# instead of from registers. Checks with it (--dq-only), the kernel alone both ways, llama3-8b
# Q4_K_M prefill both ways.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
S=$O/summary.txt
VELLUM_CUDA_DQ_TMA_SMEMA=1 dq_checks >> $S
for NKM in "14336 4096 512" "14336 4096 2048" "4096 14336 512" "4096 4096 512" "14336 4096 256"; do for SA in 0 1; do
  echo "$NKM smem-a $SA: $(VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_SMEMA=$SA timeout 60 $C --dq-probe Q4_K $NKM 2>&1 | tail -1 | sed 's/.*: //')" >> $S
done; done
cat $S
wait
for r in 1 2; do for SA in 0 1; do VELLUM_CUDA_DQ_TMA_SMEMA=$SA VELLUM_BENCH_PREFILL=512,1024 model_prefill smem-a-$SA $C Q4_K_M >> $S; done; done
cat $S
