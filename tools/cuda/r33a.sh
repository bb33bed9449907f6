#!/usr/bin/env bash
# Round 33, call 1: Q/K/V in one dequantizing-GEMM launch (matmul_multi_dq, launch_dq_tma_group).
# --dq-only with the grouped checks; --plan-bench (three launches against one, forced token tiles and
# K splits; the single weights' plans); llama3-8b prefill 512 / 1 024 / 2 048 grouped (default) and
# ungrouped (VELLUM_CUDA_DQ_GROUP=0), alternating, Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "dq_tma group" > /tmp/dq.txt
grep -c PASS $O/dq-check.txt >> $S; head -3 /tmp/dq.txt >> $S; grep -c "dq_tma group" /tmp/dq.txt >> $S
grep "dq_tma group" /tmp/dq.txt | grep FAIL | head -20 >> $S
timeout 200 $C --plan-bench > $O/plans.txt 2>/tmp/plans.log; echo "plan bench exit $?" >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024,2048
for i in 1 2; do
  for G in 1 0; do
    for T in Q4_K_M Q8_0; do export VELLUM_CUDA_DQ_GROUP=$G; model_prefill group$G-$i $C $T >> $S; done
  done
done
unset VELLUM_BENCH_PREFILL VELLUM_CUDA_DQ_GROUP
cat $S; echo; cut -c1-250 $O/plans.txt
