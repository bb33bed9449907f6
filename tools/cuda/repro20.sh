#!/usr/bin/env bash
# Round 20: the same run twice gives the same tokens now that proof submits its prompts at once
# (llama3-8b's shape, Q4_K_M, deepseek-llm's vocabulary; 8 prompts; default kernels, not the
# deterministic mode), rows drawn on the GPU against whole rows, and the host's share of a step at
# 1 and 64 sequences (the backend's activity report). Run next to the stripped vellum, lib/ and
# fixtures/ggml-vocab-deepseek-llm.gguf; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; M=/tmp/l8b-dsv.gguf
[ -f $M ] || $V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1
T=$(mktemp -d)
printf '%s\n' "Once upon a time" "The little dog" "Lily and Tom went to the park" "One day, a big bird" "The sun was" "Mom said" "Tim had a red ball" "In the forest" > $T/p.txt
proof() {  # LABEL ARGS...
  local L=$1; shift
  timeout 150 $V proof -m $M --device cuda --prompts $T/p.txt --ignore-eos -n 48 "$@" > $O/proof-$L.txt 2>&1
  echo "proof $L: $(grep -E 'IDENTICAL|DIFFERENT' $O/proof-$L.txt | tail -1)"
}
S="--temp 1 --top-k 0 --top-p 1 --min-p 0"
for rep in 1 2 3; do proof same-$rep $S --a "" --b ""; done
for rep in 1 2 3; do proof drawn-vs-whole-$rep $S -s $((rep * 10)) --a "" --b "--whole-logits"; done
proof greedy-same --a "" --b ""
proof topk-vs-whole --temp 0.8 --top-k 40 --a "" --b "--whole-logits"
for B in 1 64; do
  timeout 120 $V bench -m $M --device cuda -r 1 -p 128 -n 256 -b $B --step-profile > $O/b$B.txt 2>&1
  echo "b$B: $(grep -E '^\|  *[0-9]' $O/b$B.txt | tail -1 | cut -c1-120)"; grep '^backend:' $O/b$B.txt
done
