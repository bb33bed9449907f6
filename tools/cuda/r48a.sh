#!/usr/bin/env bash
# Round 48, call 1: the staged output-projection producer (gemv_norm_out_staged.cu,
# VELLUM_CUDA_NORM_OUT_STAGED=1/2) and the carveout knob (VELLUM_CUDA_CARVEOUT). --norm-out-only
# (every producer shape bit for bit with the plain launch, the staged ones included), --graphs on
# llama3.2-1b Q4_K_M and Q8_0 with it, then llama3-8b Q4_K_M and Q8_0 batch 1, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "staged|FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  VELLUM_CUDA_NORM_OUT_STAGED=2 timeout 200 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  echo "[${SECONDS}s] --graphs llama3.2-1b $T, staged 2 (exit $?)" >> $S
  grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
done
wait
for i in 1 2; do
  b1 main Q4_K_M
  b1 S2 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=2
  b1 S1 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=1
  b1 S2C100 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=2 VELLUM_CUDA_CARVEOUT=100
  b1 mainC100 Q4_K_M VELLUM_CUDA_CARVEOUT=100
  b1 main Q8_0
  b1 S2 Q8_0 VELLUM_CUDA_NORM_OUT_STAGED=2
  b1 S1 Q8_0 VELLUM_CUDA_NORM_OUT_STAGED=1
  b1 S2C100 Q8_0 VELLUM_CUDA_NORM_OUT_STAGED=2 VELLUM_CUDA_CARVEOUT=100
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
