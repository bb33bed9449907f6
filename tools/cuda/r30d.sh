#!/usr/bin/env bash
# Round 30, call 4 (the GEMV tails: branch r30-gemv-tails): where the model's one-row steps part from the ops (calls 2-3: the tails and round
# 19's layer kernel give the same logits, the ops others, while every op-level check agrees).
# --tails-only (llama3.2-1b's sizes, the attention's int8 copy as input); --graphs on llama3.2-1b
# Q4_K_M with the tails on, off (VELLUM_CUDA_GEMV_TAILS=0), early launch off; the deterministic
# batch invariance with the tails on and off.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1
timeout 200 $C --tails-only > $O/tails-check.txt 2>&1; echo "tails checks (exit $?): $(tail -1 $O/tails-check.txt)" >> $S
grep -E "FAIL|tails vs" $O/tails-check.txt | cut -c1-250 >> $S
g() {  # g LABEL TYPE ENV...: --graphs, its verdicts on one line
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --graphs /tmp/p-$T.gguf > /dev/null 2> $O/graphs-$L-$T.log
  echo "$T $L: $(grep -hE 'graphs vs|tails vs|kernel vs' $O/graphs-$L-$T.log | sed -E 's/ +/ /g' | cut -c1-330 | tr '\n' ' ')" >> $S
}
g default Q4_K_M
g tails-off Q4_K_M VELLUM_CUDA_GEMV_TAILS=0
g early-off Q4_K_M VELLUM_CUDA_EARLY_LAUNCH=0
g rope-pair-off Q4_K_M VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_GEMV_PAIR=0 VELLUM_CUDA_EARLY_LAUNCH=0
for M in 0 1; do echo "invariance tails=$M: $(VELLUM_CUDA_GEMV_TAILS=$M timeout 120 $C --invariance /tmp/p-Q4_K_M.gguf 2>&1 | grep -E 'deterministic model' | sed -E 's/ +/ /g' | cut -c1-200)" >> $S; done
cat $S
