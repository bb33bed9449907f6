#!/usr/bin/env bash
# Round 39, call 7: the prefill attention's launch knobs, tuned for round 31's copier, under the
# copying warp: turns (VELLUM_CUDA_ATTN_WG_PP), dispatch order (_ORDER), stages (_STAGES), K/V tile
# (_KV), each forced both ways, at 512 / 2 048 / 8 192 tokens.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 200 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
for k in DEFAULT=1 VELLUM_CUDA_ATTN_WG_PP=0 VELLUM_CUDA_ATTN_WG_PP=1 VELLUM_CUDA_ATTN_WG_ORDER=0 VELLUM_CUDA_ATTN_WG_ORDER=1 VELLUM_CUDA_ATTN_WG_STAGES=2 VELLUM_CUDA_ATTN_WG_KV=64 DEFAULT=2; do
  left $k && attn_prefill "$k" $C $k >> $S
done
echo "done at ${SECONDS}s" >> $S
cat $S
