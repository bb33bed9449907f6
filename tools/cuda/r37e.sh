#!/usr/bin/env bash
# Round 37, call 5: the Q8_0 wave cut (VELLUM_CUDA_DQ_CUT_Q8) in the model, alternating three times;
# the warps' stall reasons in the cut's two fused SwiGLU launches (256- and 128-token tiles).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1
export VELLUM_BENCH_PREFILL=512
for r in 1 2 3; do for c in 0 1; do VELLUM_CUDA_DQ_CUT_Q8=$c model_prefill cut$c $C Q8_0 >> $S; done; done
unset VELLUM_BENCH_PREFILL
M='regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$'
for k in 256 128; do
  VELLUM_CUDA_DQ_CUT_Q8=1 VELLUM_PROFILE_PREFILL=512 timeout 200 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k "regex:swiglu_kernel<.*WQ8_0, $k>" --launch-skip 4 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --metrics "$M,smsp__inst_executed.sum,smsp__cycles_active.avg" $C --profile /tmp/l8b-Q8_0.gguf > $O/ncu-$k.txt 2>&1
  echo "== ncu Q8_0 SwiGLU $k exit $?" >> $S
  grep -E "Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|inst_executed.sum|cycles_active" $O/ncu-$k.txt | sed -E 's/ +/ /g' >> $S
  grep -E "issue_stalled" $O/ncu-$k.txt | sed -E 's/ +/ /g; s/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '$NF+0 > 0.05' >> $S
done
cat $S
