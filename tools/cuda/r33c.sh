#!/usr/bin/env bash
# Round 33, call 4: the register-A kernel's loop four stages a turn (each stage's place in its
# super-block a constant: Q4_K's scale bytes without a branch) against call 3's binary (vcc_group:
# two stages a turn). --dq-only on the new binary; --plan-bench on both; llama3-8b prefill 512 /
# 1 024 / 2 048 on both, alternating, Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_group; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "dq_tma group" > /tmp/dq.txt
head -1 /tmp/dq.txt >> $S; grep FAIL /tmp/dq.txt | head -20 >> $S
timeout 100 $C --plan-bench > $O/plans.txt 2>/tmp/plans.log; echo "plan bench (4-stage loop) exit $?" >> $S
timeout 100 $D/vcc_group --plan-bench > $O/plans-old.txt 2>/tmp/plans-old.log; echo "plan bench (2-stage loop) exit $?" >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024,2048
for i in 1 2; do
  for X in vellum_cuda_check vcc_group; do
    for T in Q4_K_M Q8_0; do model_prefill $X-$i $D/$X $T >> $S; done
  done
done
cat $S; echo; paste -d'\n' $O/plans.txt $O/plans-old.txt | cut -c1-200
