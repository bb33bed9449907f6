#!/usr/bin/env bash
# Round 49, call 6: past 1 024 positions a one-row step takes RoPE + K/V store and round 17's long
# kernel (attention.cu). Its shapes were tuned in round 17, before programmatic launch and the row
# norm; this sweeps them again in today's chain: llama3-8b Q4_K_M batch 1 after 1 100, 2 048, 4 096
# and 7 600 tokens, VELLUM_CUDA_ATTN_LONG 4 (default: 8 warps, 2 stages, 16 runs) against 5 (8, 3,
# 16), 3 (4, 4, 16), 1 (4, 2, 32), 2 (4, 3, 32), and 4 with 32 or 8 runs.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
echo "[${SECONDS}s] model ready" >> $S
for c in 4096 1100 7600 2048; do
  for v in 4 5 3 1 2; do
    [ $SECONDS -lt 520 ] || break 2
    b1 ctx$c-long$v Q4_K_M VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_ATTN_LONG=$v
  done
  [ $SECONDS -lt 520 ] || break
  b1 ctx$c-long4-runs32 Q4_K_M VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_ATTN_LONG_RUNS=32
  b1 ctx$c-long4-runs8 Q4_K_M VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_ATTN_LONG_RUNS=8
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
