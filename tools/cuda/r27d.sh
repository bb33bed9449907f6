#!/usr/bin/env bash
# Round 27, call 4: 128-position K/V steps fail call 3's checks; which product: --attn-only with V in
# 64-row sub-tiles (VELLUM_CUDA_ATTN_WG_SPLIT bit 1) and/or S as two N = 64 products (bit 2).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for SP in 1 2 3; do
  VELLUM_CUDA_ATTN_WG_KV=128 VELLUM_CUDA_ATTN_WG_SPLIT=$SP timeout 200 $C --attn-only > $O/attn-$SP.txt 2>&1
  echo "attn checks kv=128 split=$SP (exit $?): $(tail -1 $O/attn-$SP.txt)" >> $S
  grep FAIL $O/attn-$SP.txt | head -3 | cut -c1-120 >> $S
done
cat $S
