#!/usr/bin/env bash
# The fused SwiGLU and its knob are on branch r32-swiglu-fused (measured, not kept: docs/cuda.md, round 32).
# Round 32, call 12: quantized gate/up and their SwiGLU in one register-A launch (set_dq_swiglu_fused,
# VELLUM_CUDA_DQ_SWIGLU_FUSED). --dq-only (with the fused-vs-unfused checks), every op against the CPU
# and the model checks (final_checks; --graphs on llama3.2-1b Q4_K_M / Q8_0), then llama3-8b prefill
# and the quick bench fused / unfused, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
dq_checks "fused SwiGLU|staged store" >> $S
export SYNTH_TYPES="Q4_K_M Q8_0"
final_checks
cat $O/final.txt >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-160 | sed "s/^/$T: /" | sort -u >> $S
done
export VELLUM_BENCH_PREFILL=512,1024
for i in 1 2; do
  for K in 1 0; do
    for T in Q4_K_M Q8_0; do export VELLUM_CUDA_DQ_SWIGLU_FUSED=$K; model_prefill fused$K-$i $C $T >> $S; done
  done
done
unset VELLUM_BENCH_PREFILL VELLUM_CUDA_DQ_SWIGLU_FUSED
for K in 1 0; do q fused$K Q4_K_M VELLUM_CUDA_DQ_SWIGLU_FUSED=$K; done
cat $O/quick.txt >> $S
cat $S
