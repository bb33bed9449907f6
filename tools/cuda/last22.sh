#!/usr/bin/env bash
# Round 22, last call: run5.sh's checks and the invariance check on the final binary, then default-mode
# batch 1 of llama3-8b Q4_K_M and Q8_0 (graphs + PDL), to show the shared float terms changed nothing.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
cat $O/final.txt
for T in Q4_K_M Q8_0; do
  VELLUM_BENCH_QUICK=1 timeout 150 $C --only-bench --batch1-only --model /tmp/l8b-$T.gguf > $O/b1-$T.txt 2>&1
  echo "$T batch 1: $(grep 'decode batch 1' $O/b1-$T.txt | grep '\[graphs on\]' | sed -E 's/.*\]: //' | tr '\n' ' ' | cut -c1-200)"
done
