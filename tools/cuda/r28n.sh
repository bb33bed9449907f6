#!/usr/bin/env bash
# Round 28, call 17: the two tensor-core attention kernels' final store of o / l shared
# (online_softmax.cuh's store_rows; same instruction counts, some reordered): --attn-only with the
# wgmma kernel and with mma.sync (VELLUM_CUDA_ATTN_WG=0), then the prefill attention timings.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for W in 1 0; do
  VELLUM_CUDA_ATTN_WG=$W timeout 200 $C --attn-only > $O/attn-$W.txt 2>&1
  echo "attn checks wg=$W (exit $?): $(tail -1 $O/attn-$W.txt)" >> $S
  grep FAIL $O/attn-$W.txt | head -3 | cut -c1-120 >> $S
done
timeout 200 $C --prefill-attn-only > $O/pa.txt 2>&1
grep "prefill attention" $O/pa.txt | sort -u | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores.*, mma.sync/\2 \1: mma.sync/" >> $S
cat $S
