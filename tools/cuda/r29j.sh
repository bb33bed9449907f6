#!/usr/bin/env bash
# Round 29, call 10: the round's two batch-1 changes together (RoPE + K/V store + attention in one
# kernel; Q4_K_M's Q/K and V GEMVs in one pair launch). Every op against the CPU, stories260K greedy,
# graphs vs eager, CPU vs GPU greedy, batch invariance (final_checks); graphs vs eager on llama3.2-1b
# Q4_K_M and Q8_0; batch-1 decode of llama3-8b Q4_K_M with each change off (VELLUM_CUDA_ROPE_ATTN=0,
# VELLUM_CUDA_GEMV_PAIR=0) and both, alternating, and Q8_0; the quick bench of Q4_K_M both ways.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
export SYNTH_TYPES="Q4_K_M Q8_0"
final_checks
S=$O/summary.txt
cat $O/final.txt > $S
grep -E "matmul_multi.*(pair|Q6_K)" $O/check_table.txt | cut -c1-200 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T llama3.2-1b: $(timeout 150 $C --graphs /tmp/p-$T.gguf 2>/dev/null | grep -E 'graphs vs eager' | head -1 | cut -c1-230)" >> $S
done
for R in 1 2; do
  b1 default$R Q4_K_M
  b1 nopair$R Q4_K_M VELLUM_CUDA_GEMV_PAIR=0
  b1 norope$R Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
  b1 neither$R Q4_K_M VELLUM_CUDA_GEMV_PAIR=0 VELLUM_CUDA_ROPE_ATTN=0
done
b1 default Q8_0
b1 norope Q8_0 VELLUM_CUDA_ROPE_ATTN=0
cat $O/b1.txt >> $S
q default Q4_K_M
q neither Q4_K_M VELLUM_CUDA_GEMV_PAIR=0 VELLUM_CUDA_ROPE_ATTN=0
cat $O/quick.txt >> $S
cat $S
