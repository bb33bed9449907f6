#!/usr/bin/env bash
# Round 14 calls 1-3, as now rerunnable (call 3 also timed variant 6, since removed): checks (decode
# variants 4/5), attention bench, ncu of variants 4 and 5 at 64 x 8k, llama3-8b quick benches:
# BF16 / Q4_K_M / F16, old (round 13's binary, vellum_cuda_check.old.xz) vs new (default).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
xz -dc $D/vellum_cuda_check.old.xz > /tmp/check.old && chmod +x /tmp/check.old
(for T in F16 Q4_K_M BF16; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "warp pipelines" $O/check_table.txt | cut -c1-150; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; } > $O/final.txt
timeout 150 $C --attn-bench > $O/attn.txt 2> $O/attn.log
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for V in 4 5; do
  VELLUM_CUDA_ATTN_DECODE=$V timeout 120 $NCU -f -o $O/a$V -k regex:attn_decode --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    $C --attn-probe 8192 64 > $O/ncu$V.log 2>&1
  $NCU -i $O/a$V.ncu-rep --page details > $O/det$V.txt 2>&1; rm -f $O/a$V.ncu-rep
  echo "== ncu variant $V"; grep -E "Duration|DRAM Through|Memory Throughput|L2 Hit|Compute \(SM\)|Issue Slots|No Eligible|Active Warps Per|Eligible Warps|Registers Per|Achieved Occ|Block Size|Grid Size|Stall|Mem Busy|Max Bandwidth" $O/det$V.txt | head -30
done > $O/ncu.txt 2>&1
wait
q() {  # binary label type [env]
  L=$O/quick-$3-$2.log
  env $4 VELLUM_BENCH_QUICK=1 timeout 200 $1 --only-bench --skip-op-bench --model /tmp/l8b-$3.gguf 2>$L >/dev/null
  echo "$3 $2: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | b1 $(grep 'decode batch 1' $L | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') | $(grep -E 'prefill (512|2048) tokens \[default' $L | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
}
for T in BF16 Q4_K_M; do q /tmp/check.old old $T; q $C new $T; q /tmp/check.old old $T; q $C new $T; done
q /tmp/check.old old F16; q $C new F16
cat $O/final.txt; grep -E "paged decode" $O/attn.log | sed -E 's/\(32q\/8kv x128, //; s/ of copy bw//g' | cut -c1-600; cat $O/ncu.txt; cat $O/quick.txt
