#!/usr/bin/env bash
# Round 36, call 3 (measurement): the plan bench as is and with VELLUM_CUDA_DQ_TMA_DBG=16 (no tile
# end: no K-split sums, no stores; results wrong), to price the K split's end per plan.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for dbg in 0 16; do
  VELLUM_CUDA_DQ_TMA_DBG=$dbg timeout 150 $C --plan-bench > $O/plan$dbg.txt 2>&1; echo "== plan bench, dbg $dbg (exit $?)" >> $S
  grep -E "plans (output|down|Q/K/V Q4_K x|gate)" $O/plan$dbg.txt | grep -E "rows (256|512)" | cut -c1-200 >> $S
done
cat $S
