#!/usr/bin/env bash
# Round 28, call 2: the register-A kernel with one or two stages of wgmma in flight
# (VELLUM_CUDA_DQ_TMA_DEPTH), its checks at both depths, where its time goes (parts switched off by
# VELLUM_CUDA_DQ_TMA_DBG, results wrong: 2 no dequantization, 4 no weight copies, 8 no x copies),
# the small weights with the plan's 128-token tiles, llama3-8b prefill, and the quick bench
# (batch 1, aggregate decode, prefill) with the kernel on every many-row quantized matmul and off.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
for DP in 1 2; do
  VELLUM_CUDA_DQ_TMA_DEPTH=$DP timeout 300 $C --dq-only > $O/dq-check-$DP.txt 2>&1
  echo "depth $DP: dq checks (exit $?): $(tail -1 $O/dq-check-$DP.txt); rs lines $(grep -c 'dq tma rs' $O/dq-check-$DP.txt)" >> $S
  grep FAIL $O/dq-check-$DP.txt | head -5 | cut -c1-160 >> $S
done
for M in 512 2048; do for DP in 1 2; do for DBG in 0 2 4 6 8 12 14; do
  echo "14336x4096 rows $M depth $DP dbg $DBG: $(VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_DEPTH=$DP VELLUM_CUDA_DQ_TMA_BT=256 VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 60 $C --dq-probe Q4_K 14336 4096 $M 2>&1 | tail -1 | sed 's/.*: //')" >> $S
done; done; done
for NK in "4096 4096" "1024 4096" "4096 14336"; do for M in 256 512; do for DP in 1 2; do
  echo "$NK rows $M depth $DP (plan): $(VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_DEPTH=$DP timeout 60 $C --dq-probe Q4_K $NK $M 2>&1 | tail -1 | sed 's/.*: //')" >> $S
done; done; done
cat $S
wait
for DP in 1 2; do
  VELLUM_CUDA_DQ_TMA=0 model_prefill off $C Q4_K_M >> $S
  VELLUM_CUDA_DQ_TMA=2 VELLUM_CUDA_DQ_TMA_DEPTH=$DP model_prefill rs4-d$DP $C Q4_K_M >> $S
done
VELLUM_CUDA_DQ_TMA=2 VELLUM_CUDA_DQ_TMA_DEPTH=2 model_prefill rs4-d2 $C Q8_0 >> $S
q off Q4_K_M VELLUM_CUDA_DQ_TMA=0
q rs4 Q4_K_M VELLUM_CUDA_DQ_TMA=2 VELLUM_CUDA_DQ_TMA_DEPTH=2
cat $O/quick.txt >> $S
cat $S
