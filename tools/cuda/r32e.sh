#!/usr/bin/env bash
# Runs branch r32-stream-k's build (vcc_sk); its knobs are on that branch only.
# Round 32, call 5 (branch r32-stream-k): stream-K with the finishing block protocol (a tile's last
# part waits for the others, stored first in their blocks' walks; no partial read back). --dq-only
# (stream-K against the plain grid, run twice), the kernel alone (Q4_K 14 336 x 4 096 at 512 rows),
# llama3-8b prefill and the quick bench with VELLUM_CUDA_DQ_TMA_SK=1 / 0, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vcc_sk; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
C=$D/vcc_sk
source $D/final_common.sh
C=$D/vcc_sk
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "stream-K" >> $S
for i in 1 2; do
  VELLUM_TMA_ONE=1 VELLUM_TMA_REPS=200 timeout 120 $C --tma-bench > /tmp/tb.txt 2>&1
  echo "kernel alone $i: $(grep -o 'rs256 [a-z0-9]* [0-9.]* us ([0-9]*)' /tmp/tb.txt | sort -u | tr '\n' ';')" >> $S
done
wait
export VELLUM_BENCH_PREFILL=512,1024
for i in 1 2; do
  for K in 1 0; do
    for T in Q4_K_M Q8_0; do export VELLUM_CUDA_DQ_TMA_SK=$K; model_prefill sk$K-$i $C $T >> $S; done
  done
done
unset VELLUM_BENCH_PREFILL VELLUM_CUDA_DQ_TMA_SK
for K in 1 0; do q sk$K Q4_K_M VELLUM_CUDA_DQ_TMA_SK=$K; done
cat $O/quick.txt >> $S
cat $S
