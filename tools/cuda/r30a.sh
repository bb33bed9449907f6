#!/usr/bin/env bash
# Round 30, call 1 (the GEMV tails: branch r30-gemv-tails): the GEMV tails. --layer-only (round 19's kernel and this round's tails against the
# ops, bit for bit); batch-1 decode of llama3-8b Q4_K_M and Q8_0 with the tails and without
# (VELLUM_CUDA_GEMV_TAILS=0, the same binary), alternating; graphs vs eager and CPU vs GPU greedy on
# llama3.2-1b Q4_K_M / Q8_0; the deterministic mode's proof on Q4_K_M.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 300 $C --layer-only > $O/layer-check.txt 2>&1; echo "layer checks (exit $?): $(tail -1 $O/layer-check.txt)" >> $S
grep -E "FAIL|tails" $O/layer-check.txt | cut -c1-250 >> $S
wait
for R in 1 2; do
  for T in Q4_K_M Q8_0; do b1 tails-$R $T; b1 off-$R $T VELLUM_CUDA_GEMV_TAILS=0; done
done
cat $O/b1.txt >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --compare /tmp/p-$T.gguf --graphs /tmp/p-$T.gguf 2>$O/compare-$T.log > $O/compare-$T.txt
  echo "$T llama3.2-1b: $(grep -hE 'greedy cpu vs gpu:|graphs vs|tails vs|kernel vs' $O/compare-$T.txt $O/compare-$T.log | cut -c1-230 | tr '\n' ' ')" >> $S
done
det_proofs Q4_K_M >> $S 2>&1
cat $S
