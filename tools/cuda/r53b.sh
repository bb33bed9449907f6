#!/bin/bash
# Round 53, call 2: ncu of the wide kernel alone (Q4_K 14 336 x 4 096 at 32 rows: 8 warps, 2 splits)
# against gemv_mma's 16-row kernel on the same weight: key metrics, stall reasons, stalls by SASS line.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
which ncu >> $S 2>&1 || echo "no ncu on PATH" >> $S
export VELLUM_BENCH_QUICK=1 VELLUM_BENCH_MMA_ONLY=1 VELLUM_BENCH_GEMV_TYPES=Q4_K
prof() {  # LABEL KERNEL_REGEX ROWS
  VELLUM_BENCH_MMA_ROWS=$3 timeout 150 ncu --clock-control none -k "regex:$2" --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --page details $C --only-bench --gemv-only > $O/ncu-$1.txt 2>&1
  echo "== $1 ($2 at $3 rows; ncu exit $?)" >> $S
  grep -E "^  [a-z].*(gemv)|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occ|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Grid Size|Block Size|Waves Per SM|Executed Ipc A|Shared Memory|Pipe" $O/ncu-$1.txt | sed -E 's/ +/ /g' | cut -c1-150 | head -30 >> $S
  VELLUM_BENCH_MMA_ROWS=$3 timeout 150 ncu --clock-control none -k "regex:$2" --launch-count 1 --section WarpStateStats --section InstructionStats --page raw \
    $C --only-bench --gemv-only > $O/ncu-raw-$1.txt 2>&1
  grep -E "issue_stalled_[a-z_]+_per_warp_active.ratio" $O/ncu-raw-$1.txt | awk '{v=$NF; if (v+0 > 0.2) print "  stall", $1, v}' | sed -E 's/smsp__average_warp_latency_issue_stalled_//; s/_per_warp_active.ratio//' | head -12 >> $S
  grep -E "smsp__inst_executed.sum |sm__inst_executed_pipe_[a-z_]+.avg.pct_of_peak_sustained_active" $O/ncu-raw-$1.txt | sed -E 's/ +/ /g' | awk '{if ($NF+0 > 5 || $1 ~ /inst_executed.sum/) print "  ", $1, $NF}' | head -12 >> $S
  VELLUM_BENCH_MMA_ROWS=$3 timeout 150 ncu --clock-control none -k "regex:$2" --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --only-bench --gemv-only > /tmp/src-$1.csv 2>/tmp/src.err
  echo "-- $1 stalls by SASS line (exit $?)" >> $S
  python3 $D/ncu_stalls.py /tmp/src-$1.csv 22 >> $S 2>&1
}
prof wide32 gemv_mma_wide_kernel 32
prof mma16 gemv_mma_kernel 16
cd $O && tar czf ncu.tgz ncu-*.txt && rm -f ncu-*.txt
cat $S
