#!/usr/bin/env bash
# Round 26, call 1: the bulk-copy dequantizing GEMM (dq_tma.cu). Its checks (--dq-only: every
# quantized many-row path against f64, dq_tma's two variants among them), its speed beside
# dequantize + cuBLAS and round 15's kernel (--tma-bench), and llama3-8b Q4_K_M prefill with it on
# (VELLUM_CUDA_DQ_TMA=1) and off, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
S=$O/summary.txt
dq_checks "dq tma" >> $S
timeout 300 $C --tma-bench > $O/tma-bench.txt 2>&1; echo "tma bench exit $?" >> $S
grep -E "^dq_tma|GEMM 8192" $O/tma-bench.txt | cut -c1-400 >> $S
wait
for r in 1 2; do
  VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q4_K_M >> $S
  VELLUM_CUDA_DQ_TMA=1 model_prefill tma $C Q4_K_M >> $S
done
VELLUM_CUDA_DQ_TMA=1 VELLUM_CUDA_DQ_TMA_BT=128 model_prefill tma128 $C Q4_K_M >> $S
VELLUM_CUDA_DQ_TMA=1 VELLUM_CUDA_DQ_TMA_BT=256 model_prefill tma256 $C Q4_K_M >> $S
VELLUM_CUDA_DQ_TMA=1 VELLUM_CUDA_DQ_TMA_RS=4 model_prefill tma-wait $C Q4_K_M >> $S
cat $S
