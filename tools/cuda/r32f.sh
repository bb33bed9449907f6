#!/usr/bin/env bash
# Runs branch r32-stream-k's build (vcc_sk); its knobs are on that branch only.
# Round 32, call 6 (branch r32-stream-k): the partial sums stored evict-first (st.global.cs) and read
# the same way, so that they do not push x's tiles out of L2; the kernel alone with and without
# them, then ncu's DRAM and L2 figures for the plain grid, stream-K and stream-K without partial sums.
D=$(cd "$(dirname "$0")" && pwd)
for f in vcc_sk; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
C=$D/vcc_sk
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
O=${OUT:-/tmp/o}; mkdir -p $O; S=$O/summary.txt
nvidia-smi -L
for i in 1 2; do
  for M in "VELLUM_CUDA_DQ_TMA_SK=1" "VELLUM_CUDA_DQ_TMA_SK=1 VELLUM_CUDA_DQ_TMA_DBG=16"; do
    env $M VELLUM_TMA_ONE=1 VELLUM_TMA_REPS=200 timeout 120 $C --tma-bench > /tmp/tb.txt 2>&1
    echo "$M: $(grep -o 'rs256 [a-z0-9]* [0-9.]* us ([0-9]*)' /tmp/tb.txt | sort -u | tr '\n' ';')" >> $S
  done
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" >> $S
for M in "VELLUM_CUDA_DQ_TMA_SK=1" "VELLUM_CUDA_DQ_TMA_SK=1 VELLUM_CUDA_DQ_TMA_DBG=16"; do
  env $M VELLUM_TMA_ONE=1 VELLUM_TMA_REPS=1 timeout 200 $NCU -k regex:dq_tma_rs_kernel --metrics gpu__time_duration.sum,launch__grid_size,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum $C --tma-bench > /tmp/ncu.txt 2>&1
  echo "== ncu $M (exit $?)" >> $S
  grep -E "dq_tma_rs_kernel|gpu__time|grid_size|dram__bytes|hit_rate|lts__t_bytes" /tmp/ncu.txt | grep -vE "^==PROF" | sed -E 's/ +/ /g' | cut -c1-150 | tail -60 >> $S
done
cat $S
