#!/usr/bin/env bash
# Round 49, call 8: round 48's staged output projection (one block an SM with 113 KB of shared
# memory for Q4_K 4 096 x 4 096) was measured beside the 2-slice one-row attention (11 KB a block).
# Past 512 positions its blocks meet attention blocks that need more shared memory: 3 x 42.6 KB with
# V in shared memory (8 slices), 128 KB for round 17's long kernel past 1 024. Q4_K_M batch 1 after
# 16, 600, 2 048 and 4 096 tokens, default against VELLUM_CUDA_NORM_OUT_STAGED=0, two rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
echo "[${SECONDS}s] model ready" >> $S
for i in 1 2; do
  for c in 600 4096 2048 16; do
    [ $SECONDS -lt 500 ] || break 2
    b1 ctx$c-staged Q4_K_M VELLUM_BENCH_B1_CTX=$c
    b1 ctx$c-register Q4_K_M VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_NORM_OUT_STAGED=0
  done
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
