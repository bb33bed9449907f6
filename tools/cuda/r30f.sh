#!/usr/bin/env bash
# Round 30, call 6 (the GEMV tails: branch r30-gemv-tails): the norm kernel reading x and the delta through L2 (__ldcg; an experiment binary,
# vellum_cuda_check_ldcg): do the ops then give the norm tails' logits? --graphs on llama3.2-1b
# Q4_K_M with the norm tails only, both binaries.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_ldcg.gz
source $D/final_common.sh
S=$O/summary.txt
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1
g() {  # g LABEL BINARY ENV...: --graphs, its verdicts on one line
  local L=$1 X=$2; shift 2
  env "$@" timeout 200 $X --graphs /tmp/p-Q4_K_M.gguf > /dev/null 2> $O/graphs-$L.log
  echo "$L: $(grep -hE 'tails vs|graphs vs' $O/graphs-$L.log | sed -E 's/ +/ /g' | cut -c1-300 | tr '\n' ' ')" >> $S
}
g ldcg $D/vellum_cuda_check_ldcg VELLUM_CUDA_GEMV_TAILS=2
g ldcg-tails-off $D/vellum_cuda_check_ldcg VELLUM_CUDA_GEMV_TAILS=0
g plain-pdl-off $C VELLUM_CUDA_GEMV_TAILS=2 VELLUM_CUDA_PDL=0
cat $S
