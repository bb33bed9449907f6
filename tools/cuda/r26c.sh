#!/usr/bin/env bash
# Round 26, call 3: the bulk-copy GEMM with its roles by warpgroup (copies, dequantization, wgmma).
# Its checks (--dq-only), its speed beside dequantize + cuBLAS and dq_mma (--tma-bench), the kernel
# alone with the dequantization off (VELLUM_CUDA_DQ_TMA_DBG=2, results wrong), and llama3-8b
# Q4_K_M / Q8_0 prefill with it on (VELLUM_CUDA_DQ_TMA=1) and off, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
dq_checks "dq tma" >> $S
for BT in 256 192; do for DBG in 0 2; do
  echo "probe bt $BT dbg $DBG: $(VELLUM_CUDA_DQ_RS=3 VELLUM_CUDA_DQ_TMA_BT=$BT VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 60 $C --dq-probe Q4_K 14336 4096 2048 2>&1 | tail -1)" >> $S
done; done
timeout 300 $C --tma-bench > $O/tma-bench.txt 2>&1; echo "tma bench exit $?" >> $S
grep -E "^dq_tma|GEMM 8192" $O/tma-bench.txt | cut -c1-330 >> $S
wait
for TY in Q4_K_M Q8_0; do for r in 1; do
  VELLUM_CUDA_DQ_TMA=0 model_prefill off $C $TY >> $S
  VELLUM_CUDA_DQ_TMA=1 model_prefill tma $C $TY >> $S
done; done
for BT in 192 256; do VELLUM_CUDA_DQ_TMA=1 VELLUM_CUDA_DQ_TMA_BT=$BT model_prefill tma$BT $C Q4_K_M >> $S; done
cat $S
