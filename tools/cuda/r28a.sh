#!/usr/bin/env bash
# Round 28, call 1: the register-A bulk-copy GEMM (dq_tma_rs_kernel, DqMmaPlan::rs 4). Its checks
# (--dq-only: modes "dq tma" and "dq tma rs"), the kernel alone on Q4_K 14336x4096 (--dq-probe,
# rs 3 and 4, both token tiles), --tma-bench, and llama3-8b prefill with the kernels on every
# many-row quantized matmul (VELLUM_CUDA_DQ_TMA=2, kind 4 / 3) and off, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
dq_checks "dq tma" > $O/dq-summary.txt; head -3 $O/dq-summary.txt >> $S; grep -c "dq tma rs" $O/dq-check.txt >> $S
for M in 512 2048; do for RS in 4 3; do for BT in 256 128; do
  echo "probe rows $M rs $RS bt $BT: $(VELLUM_CUDA_DQ_RS=$RS VELLUM_CUDA_DQ_TMA_BT=$BT timeout 60 $C --dq-probe Q4_K 14336 4096 $M 2>&1 | tail -1)" >> $S
done; done; done
cat $S
timeout 300 $C --tma-bench > $O/tma-bench.txt 2>&1; echo "tma bench exit $?" >> $S
grep -E "^dq_tma|GEMM 8192" $O/tma-bench.txt | cut -c1-400 >> $S
wait
for r in 1 2; do
  VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q4_K_M >> $S
  VELLUM_CUDA_DQ_TMA=2 model_prefill rs4 $C Q4_K_M >> $S
done
VELLUM_CUDA_DQ_TMA=2 VELLUM_CUDA_DQ_TMA_KIND=3 model_prefill ss3 $C Q4_K_M >> $S
VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q8_0 >> $S
VELLUM_CUDA_DQ_TMA=2 model_prefill rs4 $C Q8_0 >> $S
cat $S
