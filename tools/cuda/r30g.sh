#!/usr/bin/env bash
# Round 30, call 7: the committed code (the norm's sum of squares with explicit roundings,
# sum_squares.cuh; the GEMV tails not on main). --graphs on llama3.2-1b Q4_K_M / Q8_0 (every verdict,
# the layer kernel's against the ops included); --layer-only; --det-only; every op against the CPU,
# stories260K greedy, graphs vs eager, CPU vs GPU greedy, batch invariance (final_checks); the
# deterministic proof on Q4_K_M; batch-1 decode of llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p-$T.gguf > /dev/null 2> $O/graphs-$T.log
  echo "$T llama3.2-1b: $(grep -hE 'graphs vs|kernel vs' $O/graphs-$T.log | sed -E 's/ +/ /g' | cut -c1-260 | tr '\n' ' ')" >> $S
done
timeout 300 $C --layer-only > $O/layer-check.txt 2>&1; echo "layer checks (exit $?): $(tail -1 $O/layer-check.txt)" >> $S
grep FAIL $O/layer-check.txt | cut -c1-220 >> $S
timeout 200 $C --det-only > $O/det-check.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 $O/det-check.txt)" >> $S
export SYNTH_TYPES="Q4_K_M Q8_0"
final_checks
cat $O/final.txt >> $S
det_proofs Q4_K_M >> $S 2>&1
for T in Q4_K_M Q8_0; do b1 r30 $T; done
cat $O/b1.txt >> $S
cat $S
