#!/usr/bin/env bash
# Round 23: ncu of det16_gemm_kernel launches (BF16 weight of height N at ROWS rows; pairs in CASES="N:ROWS ...").
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
for c in ${CASES:-4096:64 14336:2048}; do
  cn=${c/:/x}
  export VELLUM_DET16_BENCH_N=${c%%:*} VELLUM_DET16_BENCH_ROWS=${c##*:}
  echo "== $c"
  timeout 200 ncu --kernel-name regex:det16_gemm_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats --page details \
    $C --det16-bench > $O/ncu-$cn.txt 2>&1; echo "ncu exit $?"
  grep -E "Duration|Throughput|Registers|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Eligible Warps|Active Warps Per|Executed Ipc A|Block Limit|Bank|Executed Instructions  " $O/ncu-$cn.txt | cut -c1-140 | head -30
  timeout 200 ncu --kernel-name regex:det16_gemm_kernel --launch-count 1 --section WarpStateStats --page raw \
    $C --det16-bench > $O/ncu-raw-$cn.txt 2>&1
  grep -E "issue_stalled_[a-z_]+_per_warp_active.ratio" $O/ncu-raw-$cn.txt | awk '{v=$NF; if (v+0 > 0.3) print $1, v}' | head -20
done
