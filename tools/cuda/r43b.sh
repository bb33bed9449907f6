#!/usr/bin/env bash
# Round 43, call 2: the row norm's checks (--row-norm-only: the producer alone at each shape, every
# one-row layer tail against the ops and the CPU), graphs vs eager and row norm vs norm kernels (the
# norm kernels' run fed the row norm's greedy tokens) on llama3.2-1b Q4_K_M and Q8_0, CPU vs GPU
# greedy with the row norm on and off, then batch-1 decode of llama3-8b Q4_K_M and Q8_0 on / off.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 300 $C --row-norm-only > $O/rownorm.txt 2>&1; echo "row norm checks (exit $?): $(tail -1 $O/rownorm.txt)" >> $S
grep -E "row norm vs|norm out|FAIL" $O/rownorm.txt | grep -v "^check " | sed -E 's/ +/ /g' | sort -u | grep -v " err " | cut -c1-230 >> $S
left row norm done
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "graphs vs|row norm vs|layer kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
for RN in 1 0; do
  VELLUM_CUDA_ROW_NORM=$RN timeout 150 $C --compare /tmp/p-Q4_K_M.gguf > $O/compare-q4-$RN.txt 2>&1
  echo "row norm $RN: $(grep -E 'tokens match' $O/compare-q4-$RN.txt)" >> $S
  grep -E "^greedy cpu vs gpu, prompt" $O/compare-q4-$RN.txt | grep -v " err " | sed -E 's/ +/ /g' | cut -c1-200 >> $S
done
left compare done
wait
for r in 1 2; do
  b1 on Q4_K_M; b1 off Q4_K_M VELLUM_CUDA_ROW_NORM=0
  b1 on Q8_0; b1 off Q8_0 VELLUM_CUDA_ROW_NORM=0
done
b1 r4 Q8_0 VELLUM_CUDA_ROW_NORM_R=4
cat $O/b1.txt >> $S
left b1 done
cat $S
