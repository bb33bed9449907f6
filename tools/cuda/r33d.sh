#!/usr/bin/env bash
# Round 33, call 5: Q8_0's small-weight plan (256-token tiles above 256 rows) and gate/up as whole
# waves + a last wave of 128-token tiles (dq_tma_wave_split). --dq-only (the wave-split checks);
# --plan-bench (groups at 64..1 024 rows, the SwiGLU with and without the cut); llama3-8b prefill and
# the quick bench with VELLUM_CUDA_DQ_GROUP=1 (groups + wave split) and 0, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "wave split" > /tmp/dq.txt
cat /tmp/dq.txt | cut -c1-220 >> $S
timeout 150 $C --plan-bench > $O/plans.txt 2>/tmp/plans.log; echo "plan bench exit $?" >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024,2048
for i in 1 2; do
  for G in 1 0; do
    for T in Q4_K_M Q8_0; do export VELLUM_CUDA_DQ_GROUP=$G; model_prefill group$G-$i $C $T >> $S; done
  done
done
unset VELLUM_BENCH_PREFILL VELLUM_CUDA_DQ_GROUP
for T in Q4_K_M Q8_0; do for G in 1 0; do q group$G $T VELLUM_CUDA_DQ_GROUP=$G; done; done
cat $O/quick.txt >> $S
cat $S; echo; cut -c1-200 $O/plans.txt
