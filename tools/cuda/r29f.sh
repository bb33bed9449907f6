#!/usr/bin/env bash
# Round 29, call 6: calibration. Batch-1 decode of llama3-8b Q4_K_M (graphs + PDL) with the one-row
# kernel whole, leaving after its wait (DBG 1) and spinning 2 µs there (DBG 2); then ncu of the kernel
# alone in an eager step (whole and DBG 1) with its clock and issue figures.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
"$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for R in 1 2; do
  b1 fused$R Q4_K_M
  b1 dbg1-$R Q4_K_M VELLUM_CUDA_ROPE_ATTN_DBG=1
  b1 dbg2-$R Q4_K_M VELLUM_CUDA_ROPE_ATTN_DBG=2
done
cat $O/b1.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for B in 0 1; do
  echo "== ncu dbg $B"
  VELLUM_CUDA_ROPE_ATTN_DBG=$B VELLUM_PROFILE_CTX=200 VELLUM_PROFILE_BATCH1_ONLY=1 timeout 200 "$NCU" --clock-control none --profile-from-start off \
    --kernel-name regex:attn_rope_row --launch-skip 3 --launch-count 2 --cache-control none \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__cycles_active.max,sm__cycles_active.max,smsp__inst_executed.max,smsp__inst_executed.sum,launch__grid_size,launch__cluster_dim_x,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio \
    $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-$B.txt 2>&1; echo "exit $?"
  grep -E "attn_rope_row|gpu__time|per_second|cycles_active|inst_executed|grid_size|cluster_dim|warps_active|stalled" $O/ncu-$B.txt | sed -E 's/ +/ /g' | cut -c1-150 | head -40
done
