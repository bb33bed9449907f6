#!/usr/bin/env bash
# Round 36, call 7: the two-way K split's second block copies the first's part into its shared
# memory with the copy engine (finish_tile's kStage) instead of 128 loads a thread. The dq and tail
# checks (K splits bit for bit), the plan bench, prefill, the model checks.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks >> $S
timeout 200 $C --tail-rows-only > $O/tail.txt 2>&1; echo "tail checks (exit $?): $(tail -1 $O/tail.txt)" >> $S
grep -E "FAIL" $O/tail.txt | cut -c1-170 >> $S
timeout 150 $C --plan-bench > $O/plan.txt 2>&1; echo "plan bench (exit $?)" >> $S
grep -E "plans (output|down|Q/K/V Q4_K x|gate)" $O/plan.txt | grep -E "rows (256|512)" | cut -c1-200 >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024
for T in Q4_K_M Q8_0; do model_prefill r1 $C $T >> $S; done
model_checks >> $S 2>&1
cat $S
