#!/usr/bin/env bash
# The staged GEMV and its knob are on branch r32-gemv-staged (measured, not kept: docs/cuda.md, round 32).
# Round 32, call 3: the batch-1 GEMV from weights staged in shared memory before the programmatic
# wait (gemv_staged.cu, VELLUM_CUDA_GEMV_STAGED; the output projections of llama3-8b). --staged-only,
# graphs vs eager with it on (llama3.2-1b Q4_K_M and Q8_0), batch 1 on/off alternating, the decode
# chain traced.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --staged-only > /tmp/staged.txt 2>&1; echo "staged checks (exit $?): $(tail -1 /tmp/staged.txt)" >> $S
grep -E "FAIL|gemv staged Q(8_0|4_K) 4096x4096" /tmp/staged.txt | head -8 | cut -c1-170 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  VELLUM_CUDA_GEMV_STAGED=1 timeout 200 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|kernel vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | sed "s/^/$T staged: /" >> $S
done
wait
for i in 1 2; do
  for G in 0 1; do b1 st$G Q8_0 VELLUM_CUDA_GEMV_STAGED=$G; b1 st$G Q4_K_M VELLUM_CUDA_GEMV_STAGED=$G; done
done
cat $O/b1.txt >> $S
for T in Q8_0 Q4_K_M; do
  for G in 0 1; do
    VELLUM_CUDA_GEMV_STAGED=$G timeout 200 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T-st$G.md 2> /tmp/trace-$T-st$G.log
    echo "trace $T st$G: exit $?" >> $S
  done
done
cat $S
