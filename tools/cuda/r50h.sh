#!/usr/bin/env bash
# Round 50, call 8: ncu of llama3-8b Q4_K_M's batch-1 GEMVs alone (an eager step after 100 tokens,
# caches flushed between kernels): layer 4's down projection (Q4_K producer, gemv_kq_norm_out_kernel),
# its gate/up (Q4_K SwiGLU, gemv_kq_kernel) and the Q6_K output layer (gemv_kq_kernel, streaming at
# copy bandwidth), key metrics and warp stall reasons; the down projection's stalls by SASS line.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
which ncu >> $S 2>&1 || echo "no ncu on PATH" >> $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
export VELLUM_PROFILE_CTX=100 VELLUM_PROFILE_BATCH1_ONLY=1
prof() {  # LABEL KERNEL_REGEX SKIP
  timeout 150 ncu --clock-control none -k "regex:$2" --launch-skip $3 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
    --page details $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-$1.txt 2>&1
  echo "== $1 ($2, skip $3; ncu exit $?)" >> $S
  grep -E "^  [a-z].*(gemv|norm)|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occ|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Grid Size|Block Size|Waves Per SM" $O/ncu-$1.txt | sed -E 's/ +/ /g' | cut -c1-150 | head -24 >> $S
  timeout 150 ncu --clock-control none -k "regex:$2" --launch-skip $3 --launch-count 1 --section WarpStateStats --page raw \
    $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-raw-$1.txt 2>&1
  grep -E "issue_stalled_[a-z_]+_per_warp_active.ratio" $O/ncu-raw-$1.txt | awk '{v=$NF; if (v+0 > 0.2) print "  stall", $1, v}' | sed -E 's/smsp__average_warp_latency_issue_stalled_//; s/_per_warp_active.ratio//' | head -12 >> $S
}
prof down-q4k gemv_kq_norm_out_kernel 4
prof gateup-q4k gemv_kq_kernel 4
prof output-q6k gemv_kq_kernel 32
timeout 150 ncu --clock-control none -k "regex:gemv_kq_norm_out_kernel" --launch-skip 4 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/src.csv 2>/tmp/src.err
echo "== down-q4k stalls by SASS line (exit $?)" >> $S
python3 $D/ncu_stalls.py /tmp/src.csv 25 >> $S 2>&1
gzip -c /tmp/src.csv > $O/src-down-q4k.csv.gz
cd $O && tar czf ncu.tgz ncu-*.txt && rm -f ncu-*.txt
cat $S
