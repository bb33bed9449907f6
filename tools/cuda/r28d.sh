#!/usr/bin/env bash
# Round 28, call 5: the default now takes the register-A kernel at 129..1 024 rows (VELLUM_CUDA_DQ_TMA=1)
# and writes bf16 gate/up rows for the bf16 SwiGLU (matmul_swiglu_dq). Checks (--dq-only with the
# many-row SwiGLU through the defaults; stories260K greedy, graphs vs eager, CPU vs GPU greedy),
# llama3-8b prefill at 512 / 1 024 / 2 048 tokens against VELLUM_CUDA_DQ_TMA=0 (alternating), and
# the quick bench (batch 1, aggregate decode, prefill): default, off, and from 65 rows.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
dq_checks "swiglu" >> $S
model_checks >> $S 2>&1
cat $S
wait
export VELLUM_BENCH_PREFILL=512,1024,2048
for r in 1 2; do
  model_prefill default $C Q4_K_M >> $S
  VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q4_K_M >> $S
done
model_prefill default $C Q8_0 >> $S
VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q8_0 >> $S
unset VELLUM_BENCH_PREFILL
q default Q4_K_M
q off Q4_K_M VELLUM_CUDA_DQ_TMA=0
q min65 Q4_K_M VELLUM_CUDA_DQ_TMA_MIN=65
cat $O/quick.txt >> $S
cat $S
