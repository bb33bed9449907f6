#!/usr/bin/env bash
# Round 33, call 6 (final): the committed code. Every op against the CPU, stories260K greedy, graphs
# vs eager, CPU vs GPU greedy, batch invariance (final_checks); --dq-only; --graphs on llama3.2-1b
# Q4_K_M / Q8_0 (40-row steps take the grouped Q/K/V); llama3-8b Q8_0 prefill with Q8_0's gate/up
# cut (default) and without (VELLUM_CUDA_DQ_WAVE_Q8=0), alternating; the quick bench, Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
export SYNTH_TYPES="Q4_K_M Q8_0"
final_checks
cat $O/final.txt >> $S
dq_checks "wave split" | head -12 | cut -c1-200 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-160 | sed "s/^/$T: /" | sort -u >> $S
done
export VELLUM_BENCH_PREFILL=512,1024
for i in 1 2; do
  for W in 1 0; do VELLUM_CUDA_DQ_WAVE_Q8=$W model_prefill waveq8-$W-$i $C Q8_0 >> $S; done
done
unset VELLUM_BENCH_PREFILL
for T in Q4_K_M Q8_0; do q final $T; done
cat $O/quick.txt >> $S
cat $S
