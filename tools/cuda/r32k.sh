#!/usr/bin/env bash
# Round 32, call 11 (an H100, as BENCHMARKS.md's figures): llama3-8b prefill (512 / 1 024 / 2 048) and
# the quick bench with the tile stored through shared memory (default) and the old store, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
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
