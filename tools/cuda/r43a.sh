#!/usr/bin/env bash
# Round 43, call 1: the row-norm layer tail's checks (--layer-only: every layer_tail shape against the
# ops and the CPU; graphs vs eager and row norm vs norm kernels on llama3.2-1b Q4_K_M and Q8_0; CPU vs
# GPU greedy on the Q4_K_M one), then batch-1 decode of llama3-8b Q4_K_M and Q8_0 with it on, off,
# and with 2 rows a warp in its producers, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 300 $C --layer-only > $O/layer.txt 2>&1; echo "layer checks (exit $?): $(tail -1 $O/layer.txt)" >> $S
grep -E "row norm|FAIL" $O/layer.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
left layer done
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "graphs vs|row norm vs|layer kernel vs|FAIL|checks," $O/graphs-$T.txt | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
timeout 150 $C --compare /tmp/p-Q4_K_M.gguf > $O/compare-q4.txt 2>&1
grep -E "greedy|match|FAIL" $O/compare-q4.txt | cut -c1-200 | head -8 >> $S
left compare done
wait
for r in 1 2; do
  b1 on Q4_K_M; b1 off Q4_K_M VELLUM_CUDA_ROW_NORM=0; b1 r2 Q4_K_M VELLUM_CUDA_ROW_NORM_R=2
done
b1 on Q8_0; b1 off Q8_0 VELLUM_CUDA_ROW_NORM=0; b1 r2 Q8_0 VELLUM_CUDA_ROW_NORM_R=2
cat $O/b1.txt >> $S
left b1 done
cat $S
