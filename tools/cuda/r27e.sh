#!/usr/bin/env bash
# Round 27, call 5: P's registers fenced until the P·V products are awaited; --attn-only with 128-position
# steps as laid out first (split 0) and V in 64-row sub-tiles (split 1), then their timings.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for SP in 0 1; do
  VELLUM_CUDA_ATTN_WG_KV=128 VELLUM_CUDA_ATTN_WG_SPLIT=$SP timeout 200 $C --attn-only > $O/attn-$SP.txt 2>&1
  echo "attn checks kv=128 split=$SP (exit $?): $(tail -1 $O/attn-$SP.txt)" >> $S
  grep FAIL $O/attn-$SP.txt | head -3 | cut -c1-120 >> $S
done
for SP in 0 1 2; do
  VELLUM_CUDA_ATTN_WG_SPLIT=$SP timeout 200 $C --prefill-attn-only > $O/pa-$SP.txt 2>&1
  grep "prefill attention" $O/pa-$SP.txt | grep BF16 | sort -u | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores.*, mma.sync/split$SP \2 \1: mma.sync/" >> $S
done
cat $S
