#!/usr/bin/env bash
# Round 36, call 6 (main): the many-row tail checks (call 5's full run failed them only because its
# pair forced dq_mma; now on a fresh pair), then prefill with the fused SwiGLU off / on alternating,
# and the quick bench.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --tail-rows-only > $O/tail.txt 2>&1; echo "tail checks (exit $?): $(tail -1 $O/tail.txt)" >> $S
grep -E "FAIL|added into x" $O/tail.txt | cut -c1-170 >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024,2048
for f in 0 1; do VELLUM_CUDA_DQ_SWIGLU=$f model_prefill f$f $C Q4_K_M >> $S; done
unset VELLUM_BENCH_PREFILL
for T in Q4_K_M Q8_0; do q main $T; done
cat $O/quick.txt >> $S
cat $S
