#!/usr/bin/env bash
# Round 37, call 4: what limits the dequantizing GEMM at 512 rows now (plan bench with
# VELLUM_CUDA_DQ_TMA_DBG 2: no dequantization, 4: no weight copies, 8: no x copies; results wrong),
# and where the 512-token prefill attention's 22 us go (ncu sections of one launch).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1 &
for g in 0 2 4 8 12; do VELLUM_CUDA_DQ_TMA_DBG=$g timeout 200 $C --plan-bench > $O/plan-dbg$g.txt 2>&1; echo "plan bench dbg=$g exit $?" >> $S; grep -E "rows 512" $O/plan-dbg$g.txt | grep -E "SwiGLU|Q/K/V Q8_0|output Q8_0|down" | cut -c1-170 >> $S; done
wait
VELLUM_PROFILE_PREFILL=512 timeout 200 ncu --clock-control none --profile-from-start off -k regex:attn_wg_kernel --launch-skip 4 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
  $C --profile /tmp/l8b-Q8_0.gguf > $O/ncu-attn.txt 2>&1
echo "ncu attn exit $?" >> $S
grep -E "Duration|Throughput|Grid Size|Block Size|Registers|Achieved|No Eligible|Stall|Warp Cycles Per Issued|Active Warps" $O/ncu-attn.txt | head -20 >> $S
cat $S
