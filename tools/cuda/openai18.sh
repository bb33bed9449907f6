#!/usr/bin/env bash
# Round 18: sampling without top-k end to end with `vellum bench` (temperature 1, top-k 0): the
# binary before the sampler change (vellum_r18pre, when present: every such row fully sorted on the
# host) against the committed one at top-p 0.95 / min-p 0.05 (the old binary's only choice), then the committed one
# at the OpenAI API's defaults (top-p 1, min-p 0) and at top-p 0.9; llama3-8b's shape in Q4_K_M with
# deepseek-llm's 102 400-token vocabulary. Run next to both stripped binaries, lib/ and
# fixtures/ggml-vocab-deepseek-llm.gguf; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
M=/tmp/l8b-dsv.gguf
[ -f $M ] || $D/vellum gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1 || exit 1
one() {  # tag label binary flags... (temperature 1 and top-k 0 unless the flags say otherwise)
  local T=$1 L=$2 B=$3; shift 3
  timeout 150 $D/$B bench -m $M --device cuda -p 128 -n 32 -b ${BATCHES:-1,64} -r 1 --max-num-seqs 256 ${SAMPLING:---temp 1 --top-k 0} "$@" \
    > $O/oa-$T.txt 2> $O/oa-$T.log || tail -2 $O/oa-$T.log
  echo "$L: $(grep -E '^\|  *[0-9]' $O/oa-$T.txt | awk -F'|' '{printf "b%d decode %.0f steady %.0f; ", $2, $8, $10}')" >> $O/oa.txt
}
[ -x $D/vellum_r18pre ] && one pre "before, top-p 0.95 min-p 0.05" vellum_r18pre
one now "now, top-p 0.95 min-p 0.05" vellum
one openai "now, top-p 1 min-p 0 (OpenAI defaults)" vellum --top-p 1 --min-p 0
one p09 "now, top-p 0.9 min-p 0" vellum --top-p 0.9 --min-p 0
SAMPLING="--temp 0" one greedy "now, greedy" vellum
cat $O/oa.txt
