#!/usr/bin/env bash
# Round 21, last call: the end-to-end bench with penalties (edits on the device) after the edits
# became incremental (LogitEditState), beside the OpenAI defaults. Run next to the stripped vellum,
# lib/, fixtures/ggml-vocab-deepseek-llm.gguf and final_common.sh; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
M=/tmp/l8b-dsv.gguf
[ -f $M ] || $V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1
CUT="--temp 1 --top-k 0 --top-p 0.95 --min-p 0.05 --repeat-penalty 1.1 --presence-penalty 0.3 --frequency-penalty 0.3"
e2e pen-device -p 128 -n 256 -b 1,64,256 $CUT
e2e openai -p 128 -n 256 -b 256 --temp 1 --top-k 0 --top-p 1 --min-p 0
