#!/usr/bin/env bash
# Round 29, call 12: the committed code's checks. Every op against the CPU, stories260K greedy, graphs vs
# eager, CPU vs GPU greedy, batch invariance (final_checks); --attn-only; graphs vs eager on
# llama3.2-1b Q4_K_M and Q8_0; the deterministic mode's proofs on llama3.2-1b Q4_K_M (1 sequence vs 8).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
export SYNTH_TYPES="Q4_K_M"
final_checks
S=$O/summary.txt
cat $O/final.txt > $S
timeout 200 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)" >> $S
grep FAIL $O/attn-check.txt | head -8 | cut -c1-220 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T llama3.2-1b: $(timeout 150 $C --graphs /tmp/p-$T.gguf 2>/dev/null | grep -E 'graphs vs eager' | head -1 | cut -c1-230)" >> $S
done
det_proofs Q4_K_M >> $S 2>&1
cat $S
