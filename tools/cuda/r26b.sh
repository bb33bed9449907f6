#!/usr/bin/env bash
# Round 26, call 2: where the bulk-copy kernel's time goes. Q4_K 14336x4096 at 2 048 rows (one block
# a multiprocessor, 7 waves, 64 stages a block), the kernel alone (--dq-probe), each variant with
# parts switched off (VELLUM_CUDA_DQ_TMA_DBG: 1 no wait for copies, 2 no dequantization, 4 no weight
# copies, 8 no x copies; results wrong), then ncu's stall reasons for the full kernel.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for RS in 4 3; do for BT in 256 128; do
  for DBG in 0 1 2 3 4 8 12 14 15; do
    echo "rs $RS bt $BT dbg $DBG: $(VELLUM_CUDA_DQ_RS=$RS VELLUM_CUDA_DQ_TMA_BT=$BT VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 60 $C --dq-probe Q4_K 14336 4096 ${ROWS:-2048} 2>&1 | tail -1)" >> $S
  done
done; done
export VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_BT=256
timeout 300 ncu --kernel-name regex:dq_tma_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats \
  --section SchedulerStats --section Occupancy --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis \
  $C --dq-probe Q4_K 14336 4096 ${ROWS:-2048} > $O/ncu.txt 2>&1; echo "ncu exit $?" >> $S
grep -vE "^==PROF==|^\s*$|----" $O/ncu.txt | grep -E "Duration|Throughput|Registers|Warp Cycles|Issue|Eligible|Active Warps|Executed Ipc|Executed Instructions|Bandwidth|Hit Rate" | cut -c1-150 | head -40 >> $S
timeout 300 ncu --kernel-name regex:dq_tma_kernel --launch-count 1 --section WarpStateStats --page raw \
  $C --dq-probe Q4_K 14336 4096 ${ROWS:-2048} > $O/ncu-raw.txt 2>&1; echo "ncu raw exit $?" >> $S
grep -E "stalled.*per_warp_active|issue_stalled" $O/ncu-raw.txt | awk '{v=$NF; if (v+0 > 0.05) print}' | cut -c1-150 | head -40 >> $S
cat $S
