#!/usr/bin/env bash
# Round 49, call 1: (1) the batch-1 producers quantizing their f32 input (g) themselves, no quantize
# kernel on the chain (VELLUM_CUDA_NORM_OUT_QUANTIZE, default 1); (2) the consumers' row-norm scale
# summed at the store, its partials loaded ahead of x (VELLUM_CUDA_NORM_SCALE_FIRST=1: the old order).
# Checks first: --norm-out-only (every producer shape, reading the quantize kernel's copy and
# quantizing a itself, bit for bit against the plain launch), --graphs on llama3.2-1b Q4_K_M and Q8_0
# (graphs vs eager, the layer kernel vs its ops; this also verifies round 48's last commits, which no
# GPU ran), greedy text with both changes on and both off (must be identical); then llama3-8b Q4_K_M
# and Q8_0 batch 1, the four combinations alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
grep -E "14336.*itself" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -4 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 100 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b $T (exit $?)" >> $S
  grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
  timeout 60 $V run -m /tmp/p-$T.gguf --device cuda -p "Once upon a time" -n 96 --temp 0 > $O/run-$T-new.txt 2> $O/run-$T-new.log
  VELLUM_CUDA_NORM_OUT_QUANTIZE=0 VELLUM_CUDA_NORM_SCALE_FIRST=1 timeout 60 $V run -m /tmp/p-$T.gguf --device cuda -p "Once upon a time" -n 96 --temp 0 > $O/run-$T-old.txt 2> $O/run-$T-old.log
  echo "greedy text llama3.2-1b $T, round 49's changes on vs off: $(cmp -s $O/run-$T-new.txt $O/run-$T-old.txt && echo identical || echo DIFFER) ($(wc -c < $O/run-$T-new.txt) bytes; $(tail -1 $O/run-$T-new.log | cut -c1-80))" >> $S
done
wait
echo "[${SECONDS}s] models ready" >> $S
for i in 1 2 3; do
  for T in Q4_K_M Q8_0; do
    [ $SECONDS -lt 500 ] || break 2
    b1 new $T
    b1 quantize-kernel $T VELLUM_CUDA_NORM_OUT_QUANTIZE=0
    b1 scale-first $T VELLUM_CUDA_NORM_SCALE_FIRST=1
    b1 old $T VELLUM_CUDA_NORM_OUT_QUANTIZE=0 VELLUM_CUDA_NORM_SCALE_FIRST=1
  done
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
