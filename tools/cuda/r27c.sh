#!/usr/bin/env bash
# Round 27, call 3: which part fails call 2's checks: --attn-only for K/V steps of 64 / 128 with
# and without the warpgroups' turns.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for KV in 64 128; do for PP in 0 1; do
  VELLUM_CUDA_ATTN_WG_KV=$KV VELLUM_CUDA_ATTN_WG_PP=$PP timeout 200 $C --attn-only > $O/attn-$KV-$PP.txt 2>&1
  echo "attn checks kv=$KV pp=$PP (exit $?): $(tail -1 $O/attn-$KV-$PP.txt)" >> $S
  grep FAIL $O/attn-$KV-$PP.txt | head -3 | cut -c1-120 >> $S
done; done
cat $S
