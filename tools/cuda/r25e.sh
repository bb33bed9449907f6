#!/usr/bin/env bash
# Round 25, call 5: tensor-core prefill attention variants (VELLUM_CUDA_ATTN_TC_VAR): 0 main's code at
# 1 block-minimum launch bounds, 1 K by ldmatrix, 3 + a row's block slot without a division, 4 = 3 with
# three stages, 5 = 3 with two query heads a block, 6 = 5 with three stages. Checks, then timings.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
for v in 3 4 5 6; do
  VELLUM_CUDA_ATTN_TC_VAR=$v timeout 200 $C --attn-only > $O/attn-check-$v.txt 2>&1
  echo "variant $v: attention checks exit $?: $(tail -1 $O/attn-check-$v.txt); $(grep -c FAIL $O/attn-check-$v.txt) FAIL lines" | tee -a $O/summary.txt
done
pa() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 120 $C --prefill-attn-only > /tmp/pa-$L.txt 2>&1
  echo "$L: $(grep "prefill attention" /tmp/pa-$L.txt | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores ([0-9.]+) ms \(([0-9]+) TFLOP\/s\).*/\2 \1 \3 ms (\4)/" | tr '\n' ';')" | tee -a $O/summary.txt
}
for r in 1 2; do
  for v in 0 1 3 4 5 6; do pa var$v VELLUM_CUDA_ATTN_TC_VAR=$v; done
done
cat $O/summary.txt
