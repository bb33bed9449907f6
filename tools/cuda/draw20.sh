#!/usr/bin/env bash
# Round 20: rows drawn on the device with nothing cut (draw_rows). The sampling checks (argmax,
# top-k, draws against the CPU backend), the draw kernels alone, `vellum proof` of rows drawn on the
# GPU against whole rows copied back (stories260K and llama3-8b's shape, sampled at temperature 1
# with nothing cut, graphs on), then the end-to-end bench of e2e20.sh. Run next to the stripped
# vellum, vellum_cuda_check, lib/, fixtures/ (stories260K, the deepseek-llm vocabulary) and e2e20.sh;
# logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
M=/tmp/l8b-dsv.gguf
($V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1) &
timeout 200 $C --sampling-only 2>$O/sampling.log > $O/sampling.txt; echo "sampling checks exit $?"
grep -E "draw_rows|FAIL" $O/sampling.txt | cut -c1-220; tail -1 $O/sampling.txt
for shape in "1 102400" "64 102400" "256 102400" "1 128256" "256 128256"; do timeout 60 $C --draw-probe $shape 2>&1 | tail -1; done
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
printf '%s\n' "Once upon a time" "The little dog" "Lily and Tom went to the park" "One day, a big bird" "The sun was" "Mom said" "Tim had a red ball" "In the forest" > $T/p.txt
proof() {  # LABEL MODEL ARGS...
  local L=$1 MM=$2; shift 2
  timeout 200 $V proof -m $MM --device cuda --prompts $T/p.txt --ignore-eos "$@" > $O/proof-$L.txt 2>&1; echo "proof $L (exit $?): $(grep -iE 'identical|differ|match' $O/proof-$L.txt | tail -2 | tr '\n' ' ')"
}
wait
proof stories-draw $T/s.gguf -n 200 --temp 1 --top-k 0 --top-p 1 --min-p 0 --a "" --b "--whole-logits"
proof stories-draw-t07 $T/s.gguf -n 200 --temp 0.7 --top-k 0 --top-p 1 --min-p 0 -s 99 --a "" --b "--whole-logits"
proof l8b-draw $M -n 64 --temp 1 --top-k 0 --top-p 1 --min-p 0 --a "" --b "--whole-logits"
proof l8b-draw-seq1 $M -n 32 --temp 1 --top-k 0 --top-p 1 --min-p 0 --a "--max-num-seqs 1" --b "--whole-logits"
SKIP_FWD=1 BATCHES=1,64,256 OPENAI_BATCHES=1,64,256 bash $D/e2e20.sh 2>&1 | grep -v -- "| ---"
