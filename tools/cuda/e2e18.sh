#!/usr/bin/env bash
# Round 18: `vellum bench` end to end (the engine, host sampling included) on llama3-8b's shape in
# Q4_K_M with a real 102 400-token vocabulary (deepseek-llm's, so the bench can tokenize):
# greedy and top-k 40 sampled (temperature 0.8, top-p 0.95, min-p 0.05), each with the rows reduced on
# the GPU (default) and with --whole-logits (every row copied back, as before round 18). Run next to
# the stripped vellum, lib/ and fixtures/ggml-vocab-deepseek-llm.gguf; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi -L
M=/tmp/l8b-dsv.gguf
$D/vellum gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1 || { tail -3 $O/synth.log; exit 1; }
for rep in $(seq ${REPS:-2}); do
  for T in 0 0.8; do
    for W in "" --whole-logits; do
      L=$O/e2e-$T$W-$rep
      timeout 150 $D/vellum bench -m $M --device cuda -p 128 -n 64 -b ${BATCHES:-1,64,256} -r 1 --max-num-seqs 256 \
        --temp $T --top-k 40 $W > $L.txt 2> $L.log || tail -2 $L.log
      echo "temp $T ${W:-(rows reduced on the GPU)}: $(grep -E '^\|  *[0-9]' $L.txt | awk -F'|' '{printf "b%d decode %.0f steady %.0f; ", $2, $8, $10}')" >> $O/e2e.txt
    done
  done
done
cat $O/e2e.txt
