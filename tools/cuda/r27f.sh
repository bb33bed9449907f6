#!/usr/bin/env bash
# Round 27, calls 6-7: the wgmma prefill attention without the probes (call 7: Q from shared memory,
# so P cannot take Q's registers; P fenced until its products are awaited; no runtime branch
# 128- and 64-position steps, timings of turns on/off and 2/3 stages, llama3-8b prefill off / on.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
for KV in 128 64; do
  VELLUM_CUDA_ATTN_WG_KV=$KV timeout 200 $C --attn-only > $O/attn-$KV.txt 2>&1
  echo "attn checks kv=$KV (exit $?): $(tail -1 $O/attn-$KV.txt)" >> $S
  grep FAIL $O/attn-$KV.txt | head -3 | cut -c1-120 >> $S
done
for V in "1 2" "1 3" "0 2"; do set -- $V
  VELLUM_CUDA_ATTN_WG_PP=$1 VELLUM_CUDA_ATTN_WG_STAGES=$2 timeout 200 $C --prefill-attn-only > $O/pa-$1-$2.txt 2>&1
  grep "prefill attention" $O/pa-$1-$2.txt | sort -u | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores.*, mma.sync/pp$1 st$2 \2 \1: mma.sync/" >> $S
done
wait
for r in 1 2; do for W in 0 1; do for T in BF16 Q4_K_M; do
  VELLUM_CUDA_ATTN_WG=$W model_prefill wg$W-$r $C $T >> $S
done; done; done
cat $S
