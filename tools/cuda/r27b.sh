#!/usr/bin/env bash
# Round 27, call 2: the wgmma prefill attention with its warpgroups taking turns at the tensor cores
# (VELLUM_CUDA_ATTN_WG_PP) and 2 or 3 copy stages (VELLUM_CUDA_ATTN_WG_STAGES): --attn-only for the
# turn-taking kernel, then --prefill-attn-only for each combination (mma.sync, wgmma/64, wgmma/128).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for ST in 2 3; do
  VELLUM_CUDA_ATTN_WG_STAGES=$ST timeout 200 $C --attn-only > $O/attn-$ST.txt 2>&1; echo "attn checks pp=1 stages=$ST (exit $?): $(tail -1 $O/attn-$ST.txt)" >> $S
  grep FAIL $O/attn-$ST.txt | head -4 | cut -c1-250 >> $S
done
for PP in 0 1; do for ST in 2 3; do
  VELLUM_CUDA_ATTN_WG_PP=$PP VELLUM_CUDA_ATTN_WG_STAGES=$ST timeout 200 $C --prefill-attn-only > $O/pa-$PP-$ST.txt 2>&1
  grep "prefill attention" $O/pa-$PP-$ST.txt | sort -u | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores.*, mma.sync/pp$PP st$ST \2 \1: mma.sync/" >> $S
done; done
cat $S
