#!/usr/bin/env bash
# Round 36, call 4: a two-way K split's end with one partial tile (dq_finish.cuh: the first block to
# arrive stores its part, the second adds it). The dq checks (the K-split cases bit for bit against
# unsplit, graphs), the plan bench, prefill, the ncu split, the model checks.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "split" >> $S
timeout 150 $C --plan-bench > $O/plan.txt 2>&1; echo "plan bench (exit $?)" >> $S
grep -E "plans (output|down|Q/K/V Q4_K x|gate)" $O/plan.txt | grep -E "rows (256|512)" | cut -c1-200 >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024
for r in 1 2; do for T in Q4_K_M Q8_0; do model_prefill r$r $C $T >> $S; done; done
VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu1.csv 2> /tmp/ncu.log
echo "== Q4_K_M prefill 512, ncu --clock-control none (exit $?)" >> $S
python3 $D/ncu_kernels.py /tmp/ncu1.csv 14 >> $S 2>&1
model_checks >> $S 2>&1
cat $S
