#!/usr/bin/env bash
# Round 21: the quick model bench (batch 1, aggregate decode at 1k context, prefill 512 / 2 048) of
# llama3-8b in BF16, and in Q8_0 without and with dense copies of every weight, on the H100. Run
# next to the stripped vellum, vellum_cuda_check, lib/ and final_common.sh; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
V=$D/vellum
for T in BF16 Q8_0; do [ -f /tmp/l8b-$T.gguf ] || $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done
wait
q default BF16 X=1
q copies-off Q8_0 X=1
q copies-on Q8_0 VELLUM_CUDA_DENSE_CACHE_MIB=20000
cat $O/quick.txt
