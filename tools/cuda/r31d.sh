#!/usr/bin/env bash
# Round 31, call 4: the copying-warpgroup attention kernel's variants, alternating: default, without
# turns (VELLUM_CUDA_ATTN_WG_PP=0) and with the head pairs dispatched fastest (VELLUM_CUDA_ATTN_WG_ORDER=1,
# an experiment knob: the longest query tiles of every head first); --attn-only with the latter.
D=$(cd "$(dirname "$0")" && pwd)
chmod +x $D/vellum_cuda_check
source $D/final_common.sh
S=$O/summary.txt
VELLUM_CUDA_ATTN_WG_ORDER=1 timeout 200 $C --attn-only > /tmp/attn.txt 2>&1
echo "attn checks order=1 (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
for i in 1 2; do
  attn_prefill default-$i $C >> $S
  attn_prefill pp0-$i $C VELLUM_CUDA_ATTN_WG_PP=0 >> $S
  attn_prefill order1-$i $C VELLUM_CUDA_ATTN_WG_ORDER=1 >> $S
done
cat $S
