#!/usr/bin/env bash
# Round 22: ncu of one rows_mma launch (Q4_K 14336x4096 at ROWS=512 rows).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
export VELLUM_ROWS_BENCH_NO_REF=1 VELLUM_ROWS_BENCH_ROWS=${ROWS:-512}
timeout 300 ncu --kernel-name regex:rows_mma_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats \
  --section SchedulerStats --section Occupancy --section InstructionStats --section LaunchStats \
  $C --rows-mma-bench > $O/ncu.txt 2>&1; echo "ncu exit $?"
grep -vE "^==PROF==|^rows_mma|^\s*$|----" $O/ncu.txt | grep -E "Duration|Throughput|Registers|Occupancy|Warp Cycles|Issue|Eligible|Active Warps|Executed Ipc|Block Limit|Executed Instructions" | cut -c1-150 | head -40
timeout 300 ncu --kernel-name regex:rows_mma_kernel --launch-count 1 --section WarpStateStats --page raw \
  $C --rows-mma-bench > $O/ncu-raw.txt 2>&1; echo "ncu raw exit $?"
grep -E "stalled.*per_warp_active|issue_stalled" $O/ncu-raw.txt | awk '{v=$NF; if (v+0 > 0.05) print}' | cut -c1-150 | head -40
