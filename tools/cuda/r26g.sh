#!/usr/bin/env bash
# Round 26, call 9 (branch r26-dq-tma): the dequantizing warps handle all of a thread's half-rows at
# once (their chains interleave). The kernel alone with and without its dequantization
# (VELLUM_CUDA_DQ_TMA_DBG=2), its checks, and llama3-8b Q4_K_M prefill with it (VELLUM_CUDA_DQ_TMA=2)
# and without, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
S=$O/summary.txt
dq_checks >> $S
for M in 2048 512 256; do for BT in 256 192; do for DBG in 0 2; do
  echo "rows $M bt $BT dbg $DBG: $(VELLUM_CUDA_DQ_RS=3 VELLUM_CUDA_DQ_TMA_BT=$BT VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 60 $C --dq-probe Q4_K 14336 4096 $M 2>&1 | tail -1)" >> $S
done; done; done
wait
for r in 1 2; do
  VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q4_K_M >> $S
  VELLUM_CUDA_DQ_TMA=2 model_prefill tma $C Q4_K_M >> $S
done
cat $S
