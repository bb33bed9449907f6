#!/usr/bin/env bash
# Round 49, call 2: batch-1 decode against the context (VELLUM_BENCH_B1_CTX: the prompt prefilled
# before the timed steps), llama3-8b Q4_K_M and Q8_0: the one-row fused attention takes up to 1 024
# positions (attn_rope_row.h), longer rows take RoPE + K/V store and the split attention kernel;
# VELLUM_CUDA_ROPE_ATTN=0 puts a short row on that path too (same context, both paths).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
echo "[${SECONDS}s] models ready" >> $S
for T in Q4_K_M Q8_0; do
  for c in 16 512 960; do
    b1 ctx$c $T VELLUM_BENCH_B1_CTX=$c
    b1 ctx$c-unfused $T VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_ROPE_ATTN=0
  done
  for c in 1100 2048 4096 7600; do
    [ $SECONDS -lt 480 ] || break
    b1 ctx$c $T VELLUM_BENCH_B1_CTX=$c
  done
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
