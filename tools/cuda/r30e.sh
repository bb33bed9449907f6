#!/usr/bin/env bash
# Round 30, call 5 (the GEMV tails: branch r30-gemv-tails): which tail parts the model from the ops: --graphs on llama3.2-1b Q4_K_M with the
# norm tails only (VELLUM_CUDA_GEMV_TAILS=2) and g's int8 copy only (=3).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
S=$O/summary.txt
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1
g() {  # g LABEL TYPE ENV...: --graphs, its verdicts on one line
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --graphs /tmp/p-$T.gguf > /dev/null 2> $O/graphs-$L-$T.log
  echo "$T $L: $(grep -hE 'tails vs' $O/graphs-$L-$T.log | sed -E 's/ +/ /g' | cut -c1-330 | tr '\n' ' ')" >> $S
}
g norms-only Q4_K_M VELLUM_CUDA_GEMV_TAILS=2
g q8-only Q4_K_M VELLUM_CUDA_GEMV_TAILS=3
cat $S
