#!/usr/bin/env bash
# Round 44, call 3: the SwiGLU's own int8 copy of g (group_q8.cuh): --swiglu-q8-only, --graphs on
# llama3.2-1b Q4_K_M and Q8_0 (the copy vs the quantize kernel bit for bit), and llama3-8b batch 1 with
# it on (default) and off (VELLUM_CUDA_SWIGLU_Q8=0), alternating, Q4_K_M and Q8_0.
# Ran on branch r44-swiglu-q8 (the SwiGLU int8 copy is not on main).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
timeout 120 $C --swiglu-q8-only > $O/sq8.txt 2>&1; echo "swiglu q8 checks (exit $?): $(tail -1 $O/sq8.txt)"
grep -E "swiglu int8 copy" $O/sq8.txt | cut -c1-200 | head -20
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  echo "graphs $T (exit $?):"; grep -E "SwiGLU int8|graphs vs|kernel vs|row norm vs|FAIL|checks," $O/graphs-$T.txt | sed -E 's/ +/ /g' | cut -c1-220
done
wait
for i in 1 2 3; do
  b1 on Q4_K_M; b1 off Q4_K_M VELLUM_CUDA_SWIGLU_Q8=0
  b1 on Q8_0; b1 off Q8_0 VELLUM_CUDA_SWIGLU_Q8=0
done
cut -d'|' -f1 $O/b1.txt
