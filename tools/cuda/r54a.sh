#!/usr/bin/env bash
# Round 54, call 1: where a 17-64-sequence decode step's time goes. ncu of one eager llama3-8b Q4_K_M
# step of 32 sequences at 1k (time per kernel); ncu details and stall reasons of its dequantizing
# GEMMs (dq_tma's Q/K/V group, SwiGLU and down launches); --plan-bench at 24 / 32 / 64 rows with
# forced token tiles and K splits; the aggregate decode at 16-64 sequences.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
export PATH=/usr/local/cuda/bin:$PATH
synth_l8b Q4_K_M
plan_bench 24,32,64
seqs default Q4_K_M 16,20,24,32,48,64
VELLUM_PROFILE_SEQS=32 timeout 150 ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
  $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu32.csv 2> $O/ncu32.log
echo "== ncu, decode 32 seqs x 1k (exit $?)" >> $S
python3 $D/ncu_kernels.py $O/ncu32.csv 16 >> $S 2>&1
prof() {  # LABEL KERNEL_REGEX SKIP
  VELLUM_PROFILE_SEQS=32 timeout 100 ncu --profile-from-start off --clock-control none -k "regex:$2" --launch-skip $3 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
    --page details $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-$1.txt 2>&1
  echo "== $1 ($2, skip $3; ncu exit $?)" >> $S
  grep -E "^  [a-z].*dq_|Duration|DRAM Throughput|Compute \(SM\) Th|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Grid Size|Block Size|Waves Per SM" $O/ncu-$1.txt | sed -E 's/ +/ /g' | cut -c1-150 | head -22 >> $S
  VELLUM_PROFILE_SEQS=32 timeout 100 ncu --profile-from-start off --clock-control none -k "regex:$2" --launch-skip $3 --launch-count 1 --section WarpStateStats --page raw \
    $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-raw-$1.txt 2>&1
  grep -E "issue_stalled_[a-z_]+_per_warp_active.ratio" $O/ncu-raw-$1.txt | awk '{v=$NF; if (v+0 > 0.2) print "  stall", $1, v}' | sed -E 's/smsp__average_warp_latency_issue_stalled_//; s/_per_warp_active.ratio//' | head -12 >> $S
}
prof qkv dq_tma_rs_kernel 4
prof swiglu dq_tma_swiglu_kernel 2
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz plans.txt seqs-*.log ncu* && rm -f ncu* plans.txt
cat $S
