#!/usr/bin/env bash
# Round 32, call 10: the committed code (the tile stored through shared memory by default). Every op
# against the CPU, stories260K greedy, graphs vs eager, CPU vs GPU greedy, batch invariance
# (final_checks), --graphs on llama3.2-1b Q4_K_M and Q8_0 (their 40-row steps take the kernel),
# then llama3-8b prefill with the old store and the new, alternating, on this machine.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
export SYNTH_TYPES="Q4_K_M Q8_0"
final_checks
cat $O/final.txt >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|kernel vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | sed "s/^/$T: /" >> $S
done
export VELLUM_BENCH_PREFILL=512,1024
for i in 1 2; do
  for K in 0 1; do
    for T in Q4_K_M Q8_0; do export VELLUM_CUDA_DQ_TMA_DIRECT_STORE=$K; model_prefill direct$K-$i $C $T >> $S; done
  done
done
cat $S
