#!/usr/bin/env bash
# Round 32, call 9: the register-A dequantizing GEMM's tile stored through shared memory (16-byte
# stores) against each value from the accumulators (VELLUM_CUDA_DQ_TMA_DIRECT_STORE=1): --dq-only
# (with the bit-for-bit store checks), --tma-bench (kernel alone, both stores), llama3-8b prefill
# and the quick bench, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "staged store" >> $S
timeout 200 $C --tma-bench > /tmp/tb.txt 2>&1; echo "tma-bench exit $?" >> $S
grep -E "rows (512|2048):" /tmp/tb.txt | sed -E 's/^dq_tma ([A-Z0-9_]+) ([0-9x]+) rows ([0-9]+):.*kernel alone:(.*)/\1 \2 @\3:\4/' | sed -E 's/ [0-9]+ x[0-9]+ [0-9.]+ us \([0-9]+\);//g' | sort -u | cut -c1-170 >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024,2048
for i in 1 2; do
  for K in 0 1; do
    for T in Q4_K_M Q8_0; do export VELLUM_CUDA_DQ_TMA_DIRECT_STORE=$K; model_prefill direct$K-$i $C $T >> $S; done
  done
done
unset VELLUM_BENCH_PREFILL VELLUM_CUDA_DQ_TMA_DIRECT_STORE
for K in 0 1; do q direct$K Q4_K_M VELLUM_CUDA_DQ_TMA_DIRECT_STORE=$K; done
cat $O/quick.txt >> $S
cat $S
