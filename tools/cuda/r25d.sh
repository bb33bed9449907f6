#!/usr/bin/env bash
# Round 25, call 4: the tensor-core prefill attention's K fragments by ldmatrix (VELLUM_CUDA_ATTN_TC_VAR=1)
# and with 3 blocks an SM (=2): the attention checks, then prefill attention at 512 / 2 048 / 8 192 tokens
# against the previous binary (vellum_cuda_check_base), then ncu's stall picture of variants 0 and 1.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
for v in 1 2; do
  VELLUM_CUDA_ATTN_TC_VAR=$v timeout 200 $C --attn-only > $O/attn-check-$v.txt 2>&1
  echo "variant $v: attention checks exit $?: $(tail -1 $O/attn-check-$v.txt); $(grep -c FAIL $O/attn-check-$v.txt) FAIL lines" | tee -a $O/summary.txt
done
pa() {  # LABEL BINARY ENV... (the base binary has no --prefill-attn-only: its --attn-bench, 512 and 2 048 only)
  local L=$1 B=$2; shift 2
  if [ "$L" = base ]; then F=--attn-bench; else F=--prefill-attn-only; fi
  env "$@" timeout 120 $B $F > /tmp/pa-$L.txt 2>&1
  grep "prefill attention" /tmp/pa-$L.txt | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores ([0-9.]+) ms \(([0-9]+) TFLOP\/s\).*/$L \2 \1: \3 ms \4 TFLOP\/s/" | tee -a $O/summary.txt
}
for r in 1 2; do
  pa base $D/vellum_cuda_check_base
  pa var0 $C VELLUM_CUDA_ATTN_TC_VAR=0
  pa var1 $C VELLUM_CUDA_ATTN_TC_VAR=1
  pa var2 $C VELLUM_CUDA_ATTN_TC_VAR=2
done
for v in 0 1; do
  VELLUM_CUDA_ATTN_TC_VAR=$v timeout 120 ncu --kernel-name regex:attn_tc --launch-skip 30 --launch-count 1 \
    --section WarpStateStats --section SchedulerStats --section Occupancy --section ComputeWorkloadAnalysis --section SpeedOfLight \
    $C --prefill-attn-only > $O/ncu-$v.txt 2>&1
  echo "== ncu variant $v" >> $O/summary.txt
  grep -E "attn_tc_kernel|Duration|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Stall|Achieved Occupancy|Theoretical Occupancy|Registers Per|SM Busy|Compute \(SM\) Throughput|Executed Ipc Active|Block Limit" $O/ncu-$v.txt | cut -c1-150 >> $O/summary.txt
done
cat $O/summary.txt
