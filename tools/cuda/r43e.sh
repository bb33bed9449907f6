#!/usr/bin/env bash
# Round 43, call 5 (the final binary): every op against the CPU (with the row norm's checks: the
# producer alone, every one-row layer tail against the ops and the CPU), stories260K greedy, graphs
# vs eager, CPU vs GPU greedy, batch invariance (final_checks); --det-only (batch-1 kernels against
# the deterministic rows, bit for bit); graphs vs eager and row norm vs norm kernels on llama3.2-1b
# Q4_K_M and Q8_0; batch 1 of llama3-8b Q4_K_M and Q8_0 with the row norm on and off, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
cat $O/final.txt >> $S
grep -E "row norm|norm out" $O/check_table.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
left checks done
timeout 100 $C --det-only > $O/det.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 $O/det.txt)" >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "graphs vs|row norm vs|layer kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
for r in 1 2; do
  for T in Q4_K_M Q8_0; do b1 on $T; b1 off $T VELLUM_CUDA_ROW_NORM=0; done
done
cut -d'|' -f1 $O/b1.txt >> $S
left b1 done
rm -f $O/quick-*.log $O/check.log $O/compare.log $O/inv.log
cat $S
