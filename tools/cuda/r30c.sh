#!/usr/bin/env bash
# Round 30, call 3 (the GEMV tails: branch r30-gemv-tails): the tails' arrivals as one release fence and atomic a block (norm) or a warp (int8
# copy). --layer-only (with the attention's int8 copy as input, as in a model); --graphs on
# llama3.2-1b Q4_K_M / Q8_0 with the first differing row of tails vs ops; batch-1 decode of llama3-8b
# Q4_K_M and Q8_0 with the tails off / all / the norms only / the int8 copy only (VELLUM_CUDA_GEMV_TAILS
# 0 / 1 / 2 / 3, the same binary).
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
g() {  # g LABEL TYPE ENV...: --graphs, its verdicts on one line
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --graphs /tmp/p-$T.gguf > /dev/null 2> $O/graphs-$L-$T.log
  echo "$T $L: $(grep -hE 'graphs vs|tails vs|kernel vs' $O/graphs-$L-$T.log | sed -E 's/ +/ /g' | cut -c1-330 | tr '\n' ' ')" >> $S
}
g default Q4_K_M
g default Q8_0
for T in Q4_K_M Q8_0; do for M in 0 1 2 3; do b1 mode$M $T VELLUM_CUDA_GEMV_TAILS=$M; done; done
for T in Q4_K_M Q8_0; do for M in 0 1; do b1 mode$M-2 $T VELLUM_CUDA_GEMV_TAILS=$M; done; done
cat $O/b1.txt >> $S
cat $S
