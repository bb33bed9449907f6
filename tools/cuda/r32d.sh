#!/usr/bin/env bash
# Runs branch r32-stream-k's build (vcc_sk); its knobs are on that branch only.
# Round 32, call 4 (branch r32-stream-k): why stream-K lost. Q4_K 14 336 x 4 096 at 512 rows, the
# kernel alone: plain grid, stream-K, a persistent grid of whole tiles only (VELLUM_CUDA_DQ_TMA_SK=2),
# stream-K without its partial sums (VELLUM_CUDA_DQ_TMA_DBG=16, results wrong); then prefill in the
# model with the persistent whole-tile grid against the plain one.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vcc_sk; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
("$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1) &
for i in 1 2; do
  for M in "VELLUM_CUDA_DQ_TMA_SK=1" "VELLUM_CUDA_DQ_TMA_SK=2" "VELLUM_CUDA_DQ_TMA_SK=1 VELLUM_CUDA_DQ_TMA_DBG=16"; do
    env $M VELLUM_TMA_ONE=1 VELLUM_TMA_REPS=200 timeout 120 $D/vcc_sk --tma-bench > /tmp/tb.txt 2>&1
    echo "$M: $(grep -o 'rs256 [a-z0-9]* [0-9.]* us ([0-9]*)' /tmp/tb.txt | tr '\n' ';')" >> $S
  done
done
wait
export VELLUM_BENCH_PREFILL=512,1024
for i in 1 2; do
  for K in 0 2; do export VELLUM_CUDA_DQ_TMA_SK=$K; model_prefill sk$K-$i $D/vcc_sk Q4_K_M >> $S; done
done
cat $S
