#!/usr/bin/env bash
# Round 27, call 8: the committed binary's model checks: stories260K greedy, graphs vs eager, CPU vs
# GPU greedy on qwen2.5-0.5b (64 dims: mma.sync) and on qwen3-0.6b (128 dims: the wgmma kernel), the
# latter with 8- and 200-token prompts (VELLUM_COMPARE_PROMPT), and --det-only.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
model_checks >> $S 2>&1
$V gguf synth --preset qwen3-0.6b --type F16 -o /tmp/q3.gguf > /dev/null 2>&1
for P in 8 200; do
  VELLUM_COMPARE_PROMPT=$P timeout 200 $C --compare /tmp/q3.gguf 2>/tmp/cmp-$P.log | grep -E "greedy|diverge" | cut -c1-200 | sed "s/^/qwen3-0.6b prompt $P: /" >> $S
  grep -E "greedy cpu vs gpu:" /tmp/cmp-$P.log | sed "s/^/qwen3-0.6b prompt $P: /" >> $S
done
timeout 150 $C --graphs /tmp/q3.gguf 2>&1 | grep -E "graphs vs" | cut -c1-200 | sed "s/^/qwen3-0.6b: /" >> $S
timeout 200 $C --det-only > /tmp/det.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 /tmp/det.txt)" >> $S
cat $S
