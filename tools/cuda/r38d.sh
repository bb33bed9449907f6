#!/usr/bin/env bash
# Round 38, call 4: where the fused Q/K/V launch's +31 µs go. ncu's launches in order (one layer)
# with the fusion off / on, and the fused launch's stall reasons against the plain one.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1
for f in 0 1; do
  VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 60 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum,launch__grid_size $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncu-$f.csv 2>/dev/null
  echo "== QKV_ROPE=$f" >> $S; python3 $D/ncu_sequence.py /tmp/ncu-$f.csv "rs_kernel" 20 >> $S 2>&1
done
M='regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$'
for f in 0 1; do
  VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 90 ncu --clock-control none --profile-from-start off -k "regex:dq_tma_rs_kernel" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section LaunchStats --metrics "$M,smsp__inst_executed.sum,l1tex__t_bytes.sum,lts__t_bytes.sum,dram__bytes.sum" $C --profile /tmp/l8b-Q8_0.gguf > $O/ncud-$f.txt 2>&1
  echo "== detail QKV_ROPE=$f exit $?" >> $S
  grep -E "dq_tma_rs|Duration|Grid Size|Memory Throughput|Compute \(SM\)|inst_executed|bytes.sum" $O/ncud-$f.txt | sed -E 's/ +/ /g' | cut -c1-150 >> $S
  grep -E "issue_stalled" $O/ncud-$f.txt | sed -E 's/ +/ /g; s/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '$NF+0 > 0.2' >> $S
done
cat $S
