#!/usr/bin/env bash
# Round 21, last call: the end-to-end bench with penalties (edits on the device) after the edits
# became incremental (LogitEditState), beside the OpenAI defaults. Run next to the stripped vellum,
# lib/ and fixtures/ggml-vocab-deepseek-llm.gguf; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; M=/tmp/l8b-dsv.gguf
[ -f $M ] || $V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1
e2e() {  # LABEL ARGS...
  local L=$1; shift
  timeout 300 $V bench -m $M --device cuda -r 1 --max-num-seqs 256 --step-profile "$@" > $O/e2e-$L.txt 2> $O/e2e-$L.log || tail -2 $O/e2e-$L.log
  echo "== $L: $*"; sed -n '/^| batch/,$p' $O/e2e-$L.txt | grep -v -- '| ---' | cut -c1-200
}
CUT="--temp 1 --top-k 0 --top-p 0.95 --min-p 0.05 --repeat-penalty 1.1 --presence-penalty 0.3 --frequency-penalty 0.3"
e2e pen-device -p 128 -n 256 -b 1,64,256 $CUT
e2e openai -p 128 -n 256 -b 256 --temp 1 --top-k 0 --top-p 1 --min-p 0
