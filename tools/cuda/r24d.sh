#!/usr/bin/env bash
# Round 24, call 5: the deterministic tensor-core attention's span length (VELLUM_CUDA_DET_SPAN_TILES, tiles of 64
# positions; SPANS="16 8 4"). For each: --det-only (the attention checks at that span) and the quick bench of
# llama3-8b BF16 --deterministic with VELLUM_CUDA_DET_ATTN_TC=1; then the deterministic proof, invariance and
# graphs vs eager on llama3.2-1b BF16 at the last span; the split path's quick bench as the baseline.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
qb() {  # LABEL ENV...: one line of the deterministic quick bench
  local L=$1; shift; G=$O/bench-$L.log
  env "$@" VELLUM_BENCH_QUICK=1 timeout 240 $C --only-bench --skip-op-bench --deterministic --model /tmp/l8b-BF16.gguf > $G 2>&1
  echo "$L (exit $?): b1 $(grep 'decode batch 1' $G | grep '\[graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | $(grep -E '^decode 1 seq x (8|32)k' $G | sed -E 's/^decode 1 seq x ([0-9]+k).*, ([0-9.]+) tok\/s/\1 \2/' | tr '\n' ' ')| $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2/' | tr '\n' ' ')"
}
qb split VELLUM_CUDA_DET_ATTN_TC=0
for S in ${SPANS:-16 8 4}; do
  VELLUM_CUDA_DET_SPAN_TILES=$S timeout 200 $C --det-only > $O/det-$S.txt 2>&1
  echo "span $S tiles: det checks exit $?: $(grep -E 'checks,' $O/det-$S.txt | tail -1); $(grep -E 'tensor-core spans' $O/det-$S.txt | grep -c PASS) of 4 attention checks pass"
  qb tc-span$S VELLUM_CUDA_DET_ATTN_TC=1 VELLUM_CUDA_DET_SPAN_TILES=$S
done
export VELLUM_CUDA_DET_ATTN_TC=1 VELLUM_CUDA_DET_SPAN_TILES=$S
det_proofs BF16
