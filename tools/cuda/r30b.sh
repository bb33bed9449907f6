#!/usr/bin/env bash
# Round 30, call 2 (the GEMV tails: branch r30-gemv-tails) (call 1's gate fixed: gemv_tail_supports no longer asks for buffers): --layer-only;
# batch-1 decode of llama3-8b Q4_K_M and Q8_0 with the tails and without, alternating; --graphs on
# llama3.2-1b Q4_K_M / Q8_0 (graphs vs eager, layer kernel vs ops, tails vs ops), and on Q4_K_M with
# round 29's one-row attention or pair launch off (call 1's "layer kernel vs its ops" failure); the
# deterministic mode's proof on Q4_K_M.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
 for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1; done) &
timeout 300 $C --layer-only > $O/layer-check.txt 2>&1; echo "layer checks (exit $?): $(tail -1 $O/layer-check.txt)" >> $S
grep -E "FAIL|tails vs" $O/layer-check.txt | cut -c1-250 >> $S
wait
for R in 1 2; do
  for T in Q4_K_M Q8_0; do b1 tails-$R $T; b1 off-$R $T VELLUM_CUDA_GEMV_TAILS=0; done
done
cat $O/b1.txt >> $S
g() {  # g LABEL TYPE ENV...: --graphs, its three verdicts on one line
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --graphs /tmp/p-$T.gguf > /dev/null 2> $O/graphs-$L-$T.log
  echo "$T $L: $(grep -hE 'graphs vs|tails vs|kernel vs' $O/graphs-$L-$T.log | sed -E 's/ +/ /g' | cut -c1-200 | tr '\n' ' ')" >> $S
}
g default Q4_K_M
g default Q8_0
g rope-attn-off Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
g pair-off Q4_K_M VELLUM_CUDA_GEMV_PAIR=0
det_proofs Q4_K_M >> $S 2>&1
cat $S
