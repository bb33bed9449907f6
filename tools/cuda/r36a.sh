#!/usr/bin/env bash
# Round 36, call 1: the fused SwiGLU (launch_dq_tma_swiglu: gate and up tiles side by side, the
# tile's end writing silu(gate)·up in bf16). The dq checks (check_dq_swiglu against the three
# launches, bit for bit), the plan bench's SwiGLU lines, prefill with VELLUM_CUDA_DQ_SWIGLU 0 / 1
# alternating, the ncu split with it on, and the model checks (llama3.2-1b's 40-row steps take it).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "fused SwiGLU|SwiGLU" >> $S
timeout 150 $C --plan-bench > $O/plan.txt 2>&1; echo "plan bench (exit $?)" >> $S
grep "plans SwiGLU" $O/plan.txt | cut -c1-220 >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024
for r in 1 2; do
  for T in Q4_K_M Q8_0; do
    for f in 0 1; do VELLUM_CUDA_DQ_SWIGLU=$f model_prefill f$f-$r $C $T >> $S; done
  done
done
VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu1.csv 2> /tmp/ncu.log
echo "== Q4_K_M prefill 512, ncu --clock-control none, fused (exit $?)" >> $S
python3 $D/ncu_kernels.py /tmp/ncu1.csv 14 >> $S 2>&1
model_checks >> $S 2>&1
cat $S
