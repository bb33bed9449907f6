#!/usr/bin/env bash
# Round 54, calls 4+: dq_rows' shape (8 warps a block, two stages where two blocks fit): its checks,
# --plan-bench at 24 / 32 / 64 rows, llama3-8b Q4_K_M aggregate decode at 16-64 sequences against
# VELLUM_CUDA_DQ_ROWS_MAX=0 (dq_tma), and ncu of a 32-sequence step's SwiGLU pair launch.
# Needs the binaries built with tools/cuda/results/r54-dq-rows.patch applied (--dq-rows-only, VELLUM_CUDA_DQ_ROWS_MAX).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
export PATH=/usr/local/cuda/bin:$PATH
synth_l8b Q4_K_M &
flag_checks --dq-rows-only dqrows
plan_bench 24,32,64
wait
seqs rows Q4_K_M 16,20,24,32,48,64
seqs tma Q4_K_M 20,32,64 VELLUM_CUDA_DQ_ROWS_MAX=0
VELLUM_PROFILE_SEQS=32 timeout 100 ncu --profile-from-start off --clock-control none -k "regex:dq_rows_kernel" --launch-skip 6 --launch-count 1 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section SchedulerStats --section InstructionStats --page details $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-pair.txt 2>&1
echo "== pair (ncu exit $?)" >> $S
grep -E "^  [a-z].*dq_|Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occ|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Active Warps Per Scheduler|Eligible Warps|Grid Size|Executed Instructions  " $O/ncu-pair.txt | sed -E 's/ +/ /g' | cut -c1-150 | head -14 >> $S
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz dqrows.txt plans.txt seqs-*.log ncu* && rm -f ncu* plans.txt dqrows.txt
cat $S
