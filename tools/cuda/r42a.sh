#!/usr/bin/env bash
# Round 42, call 1: gemv_mma as equal shares of (16 rows, super-block) items streamed by the resident
# warps (partial sums completed by the last warp of a tile): --dq-only (mode 8 "int8 mma rows", run
# twice bit for bit); the rows kernels alone (VELLUM_BENCH_MMA_ONLY); ncu of the Q4_K kernel
# (14 336 x 4 096); graphs vs eager on llama3.2-1b Q4_K_M / Q8_0; the quick bench of llama3-8b Q4_K_M
# with the kernel (default) and without (VELLUM_CUDA_GEMV_MMA=0).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "int8 mma rows" > $O/dq.txt 2>&1; grep -vE "PASS" $O/dq.txt | head -30 >> $S; grep -c "int8 mma rows.*PASS" $O/dq-check.txt >> $S
left dq done
VELLUM_BENCH_MMA_ONLY=1 timeout 200 $C --only-bench --gemv-only > $O/mma-bench.txt 2>&1
grep "gemv mma" $O/mma-bench.txt | sed -E 's/\| max.*//' | cut -c1-150 >> $S
left bench done
VELLUM_BENCH_GEMV_TYPES=Q4_K VELLUM_BENCH_MMA_ONLY=1 timeout 120 ncu --clock-control none -k "regex:gemv_mma_kernel" --launch-skip 5 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  $C --only-bench --gemv-only > $O/ncu-q4k.txt 2>&1
grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Block Limit|Executed Ipc|Issue Slots Busy|SM Busy|Grid Size|Waves" $O/ncu-q4k.txt | sed -E 's/ +/ /g' | head -30 >> $S
VELLUM_BENCH_GEMV_TYPES=Q4_K VELLUM_BENCH_MMA_ONLY=1 timeout 120 ncu --clock-control none -k "regex:gemv_mma_kernel" --launch-skip 5 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --only-bench --gemv-only > /tmp/src.csv 2>/tmp/src.err
python3 $D/ncu_stalls.py /tmp/src.csv 25 >> $S 2>&1; gzip -c /tmp/src.csv > $O/src-q4k.csv.gz
left ncu done
wait
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T graphs: $(timeout 100 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | head -1)" >> $S
done
left graphs done
q default Q4_K_M; q off Q4_K_M VELLUM_CUDA_GEMV_MMA=0
cat $O/quick.txt >> $S
left quick done
rm -f $O/quick-*.log $O/dq.txt
cat $S
