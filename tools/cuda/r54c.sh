#!/usr/bin/env bash
# Round 54, call 3: ncu of dq_rows in a 32-sequence llama3-8b Q4_K_M step at 1k: layer 1's SwiGLU pair
# launch (Q4_K, 14 336 x 4 096) and its Q/K/V launch: speed of light, occupancy, warp states and stall
# reasons, and the pair's stalls by SASS line.
# Needs the binaries built with tools/cuda/results/r54-dq-rows.patch applied (--dq-rows-only, VELLUM_CUDA_DQ_ROWS_MAX).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
export PATH=/usr/local/cuda/bin:$PATH
synth_l8b Q4_K_M
export VELLUM_PROFILE_SEQS=32
prof() {  # LABEL KERNEL_REGEX SKIP
  timeout 100 ncu --profile-from-start off --clock-control none -k "regex:$2" --launch-skip $3 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --section InstructionStats --page details $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-$1.txt 2>&1
  echo "== $1 ($2, skip $3; ncu exit $?)" >> $S
  grep -E "^  [a-z].*dq_|Duration|DRAM Throughput|Compute \(SM\) Th|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occ|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Grid Size|Block Size|Waves Per SM|Executed Ipc A|Block Limit|Shared Memory Configuration Size|Dynamic Shared|Executed Instructions  " $O/ncu-$1.txt | sed -E 's/ +/ /g' | cut -c1-150 | head -30 >> $S
  timeout 100 ncu --profile-from-start off --clock-control none -k "regex:$2" --launch-skip $3 --launch-count 1 --section WarpStateStats --page raw \
    $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-raw-$1.txt 2>&1
  grep -E "warp_latency_issue_stalled_[a-z_]+_per_warp_active.ratio|average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio" $O/ncu-raw-$1.txt | awk '{v=$NF; if (v+0 > 0.3) print "  stall", $1, v}' | sed -E 's/smsp__average_//; s/_per_warp_active.ratio//; s/_per_issue_active.ratio//' | head -14 >> $S
}
prof pair dq_rows_kernel 6
prof qkv dq_rows_kernel 4
timeout 120 ncu --profile-from-start off --clock-control none -k "regex:dq_rows_kernel" --launch-skip 6 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/src.csv 2>/tmp/src.err
echo "== pair stalls by SASS line (exit $?)" >> $S
python3 $D/ncu_stalls.py /tmp/src.csv 30 >> $S 2>&1
gzip -c /tmp/src.csv > $O/src-pair.csv.gz
cd $O && tar czf ncu.tgz ncu-*.txt && rm -f ncu-*.txt
cat $S
