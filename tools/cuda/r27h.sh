#!/usr/bin/env bash
# Round 27, call 9: ncu of one wgmma prefill attention launch at 8 192 tokens (F16 pool, the default
# kernel: 128-position steps, turns, 2 stages) and, for comparison, of round 25's mma.sync kernel.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
M="sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__warps_active.avg.per_cycle_active"
for K in attn_wg_kernel attn_tc_kernel; do
  W=1; [ $K = attn_tc_kernel ] && W=0
  VELLUM_CUDA_ATTN_WG=$W VELLUM_PREFILL_ATTN_T=8192 timeout 240 $NCU --clock-control none -k regex:$K --launch-skip 3 --launch-count 1 \
    --metrics $M --section WarpStateStats $C --prefill-attn-only > $O/ncu-$K.txt 2>&1
  echo "== $K" >> $S
  grep -E "^\s+(sm__|smsp__|lts__|l1tex__|gpu__)|Stall|Warp Cycles|Avg. Active" $O/ncu-$K.txt | sed -E 's/ +/ /g' | cut -c1-150 >> $S
done
cat $S
