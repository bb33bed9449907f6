#!/usr/bin/env bash
# Round 32, call 8: what the register-A dequantizing GEMM's output stores cost (VELLUM_CUDA_DQ_TMA_DBG=16
# skips them; results wrong): --tma-bench's kernel-alone timings with and without, twice.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
O=${OUT:-/tmp/o}; mkdir -p $O; S=$O/summary.txt
nvidia-smi -L
for i in 1 2; do
  for G in 0 16; do
    VELLUM_CUDA_DQ_TMA_DBG=$G timeout 200 $D/vellum_cuda_check --tma-bench > /tmp/tb-$G.txt 2>&1
    echo "== dbg $G run $i" >> $S
    grep -E "rows (512|2048):" /tmp/tb-$G.txt | sed -E 's/^dq_tma ([A-Z0-9_]+) ([0-9x]+) rows ([0-9]+):.*kernel alone:(.*)/\1 \2 @\3:\4/' | sed -E 's/ [0-9]+ x[0-9]+ [0-9.]+ us \([0-9]+\);//g' | cut -c1-160 >> $S
  done
done
cat $S
