#!/usr/bin/env bash
# Round 50, call 6: the long kernel's cluster merge where every group's 16-run cluster fits (models
# with 2 KV heads: 4 clusters), else round 17's global merge: qwen2.5-0.5b (14q/2kv x64) and a
# qwen2.5-1.5b shape (12q/2kv x128), Q4_K_M, batch 1 after 2 048 / 4 096 / 7 600 tokens, 4 against 6;
# llama3-8b's shape (8 groups: 6 takes the global merge) once as a control.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset qwen2.5-0.5b --type Q4_K_M -o /tmp/l8b-q05.gguf > $O/synth.txt 2>&1
$V gguf synth --preset qwen2.5-0.5b --dim 1536 --layers 28 --heads 12 --kv-heads 2 --ffn 8960 --type Q4_K_M -o /tmp/l8b-q15.gguf >> $O/synth.txt 2>&1
ls -la /tmp/l8b-*.gguf >> $S
timeout 30 $C --attn-clusters 2>&1 | grep -E "long kernel" >> $S
for M in q05 q15; do
  for N in 2048 4096 7600; do
    for r in 1 2; do
      b1 ctx$N-v4 $M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=4
      b1 ctx$N-v6 $M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=6
    done
  done
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
tail -3 $O/synth.txt >> $S
cat $S
