#!/usr/bin/env bash
# Round 25, calls 6-8: the tensor-core prefill attention of this folder's vellum_cuda_check against an older
# binary (BASE, default vellum_cuda_check_base; it and vellum travel gzipped), on one machine in one call:
# with CHECKS=1 first attn_checks (final_common.sh); then prefill attention at 512 / 2 048 / 8 192 tokens
# and llama3-8b BF16 / Q4_K_M prefill at 512 / 2 048, the two binaries alternating ROUNDS times (default 2).
#   call 6: CHECKS=1 (commit bb07043 vs 4709519);  call 7: CHECKS=1 ROUNDS=1 BASE=vellum_cuda_check_prev
#   (da89343 vs bb07043; its attention timings ran twice);  call 8: CHECKS=0 (da89343 vs 4709519's attention.cu).
D=$(cd "$(dirname "$0")" && pwd)
BASE=${BASE:-vellum_cuda_check_base}
gunzip -kf $D/vellum.gz $D/$BASE.gz
source $D/final_common.sh
B=$D/$BASE
nvidia-smi -L
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
[ "${CHECKS:-1}" = 1 ] && attn_checks >> $S
for r in $(seq ${ROUNDS:-2}); do attn_prefill base $B >> $S; attn_prefill new $C >> $S; done
wait
for TY in BF16 Q4_K_M; do
  for r in $(seq ${ROUNDS:-2}); do model_prefill base $B $TY >> $S; model_prefill new $C $TY >> $S; done
done
cat $S
