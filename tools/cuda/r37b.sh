#!/usr/bin/env bash
# Round 37, call 2 (main d47e493 on an H200): where Q8_0's dequantizing GEMM loses against Q4_K's at
# 512 tokens. ncu's kernel times for a Q8_0 prefill, then the SOL / warp-state / instruction
# sections of one fused-SwiGLU launch of each type (the 256-token tiles), and the plan bench.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
VELLUM_PROFILE_PREFILL=512 timeout 200 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > $O/ncu-q8.csv 2>/dev/null
echo "ncu Q8_0 exit $?" >> $S; python3 $D/ncu_kernels.py $O/ncu-q8.csv 14 >> $S 2>&1
for T in Q8_0 Q4_K_M; do
  VELLUM_PROFILE_PREFILL=512 timeout 200 ncu --clock-control none --profile-from-start off -k regex:dq_tma_swiglu_kernel --launch-skip 4 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --metrics smsp__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fp16.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active \
    $C --profile /tmp/l8b-$T.gguf > $O/ncu-detail-$T.txt 2>&1
  echo "ncu detail $T exit $?" >> $S
done
timeout 200 $C --plan-bench > $O/plan.txt 2>&1; echo "plan bench exit $?" >> $S
grep -E "Q8_0|Q4_K" $O/plan.txt | grep -E " 512 " | head -30 >> $S
cat $S
