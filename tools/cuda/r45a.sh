#!/usr/bin/env bash
# Round 45, call 1: the SwiGLU launch writes g's int8 copy from blocks of 32 outputs (block barrier,
# no fences): --swiglu-q8-only, --row-norm-only (the one-row layer tails, which now take it), --graphs
# on llama3.2-1b Q4_K_M and Q8_0 (the copy vs the quantize kernel, bit for bit), and llama3-8b batch 1
# with it on (32 warps of one output), on with 16 warps of two (VELLUM_CUDA_SWIGLU_Q8_R=4) and off
# (VELLUM_CUDA_SWIGLU_Q8=0), alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
timeout 120 $C --swiglu-q8-only > $O/sq8.txt 2>&1; echo "swiglu q8 checks (exit $?): $(tail -1 $O/sq8.txt)" >> $S
grep -E "FAIL" $O/sq8.txt | cut -c1-200 | head -10 >> $S
timeout 200 $C --row-norm-only > $O/rn.txt 2>&1; echo "row norm checks (exit $?): $(tail -1 $O/rn.txt)" >> $S
grep -E "FAIL" $O/rn.txt | cut -c1-200 | head -10 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "SwiGLU int8|graphs vs|kernel vs|row norm vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left checks done
wait
for i in 1 2 3; do
  b1 on Q4_K_M; b1 off Q4_K_M VELLUM_CUDA_SWIGLU_Q8=0; b1 r4 Q4_K_M VELLUM_CUDA_SWIGLU_Q8_R=4
  b1 on Q8_0; b1 off Q8_0 VELLUM_CUDA_SWIGLU_Q8=0
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
