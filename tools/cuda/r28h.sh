#!/usr/bin/env bash
# Round 28, call 10: ncu of the register-A kernel (Q4_K 14 336 x 4 096, 512 rows, 256-token tiles,
# --dq-probe) as it is and without its dequantization (VELLUM_CUDA_DQ_TMA_DBG=2, results wrong):
# tensor pipe, issue, stall reasons.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
for DBG in 0 2; do
  echo "== dbg $DBG"
  VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_BT=256 VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 200 ncu --clock-control none \
    --kernel-name regex:dq_tma_rs_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --page details \
    $C --dq-probe Q4_K 14336 4096 512 > $O/ncu-$DBG.txt 2>&1; echo "ncu exit $?"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Issued Warp Per Scheduler|Eligible Warps|Active Warps Per|Warp Cycles Per Issued|No Eligible|Executed Ipc A|Shared Memory|L1/TEX Hit|L2 Hit|DRAM Throughput" $O/ncu-$DBG.txt | cut -c1-120 | head -24
  VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_BT=256 VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 200 ncu --clock-control none \
    --kernel-name regex:dq_tma_rs_kernel --launch-skip 2 --launch-count 1 \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio \
    $C --dq-probe Q4_K 14336 4096 512 > $O/ncu-m-$DBG.txt 2>&1; echo "ncu metrics exit $?"
  grep -E "pipe_|stalled" $O/ncu-m-$DBG.txt | awk '{print $1, $NF}' | head -30
done
