#!/usr/bin/env bash
# Round 20: where the end-to-end steps' time goes at many sequences. The forward-only decode steps
# (vellum_cuda_check's quick bench, 1k context) beside `vellum bench --step-profile` on the same
# model: greedy and top-k 40 sampled at 128 (round 18's e2e18.sh point, 256 tokens
# generated so that every sequence decodes at once for a while: the steady span) and the OpenAI
# defaults (top-k off, temperature 1). llama3-8b's shape in Q4_K_M with deepseek-llm's 102 400-token
# vocabulary (so the bench can tokenize). Run next to the stripped vellum, vellum_cuda_check, lib/
# and fixtures/ggml-vocab-deepseek-llm.gguf; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi -L
M=/tmp/l8b-dsv.gguf
[ -f $M ] || $D/vellum gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1 || { tail -3 $O/synth.log; exit 1; }
if [ -z "${SKIP_FWD:-}" ]; then
  VELLUM_BENCH_QUICK=1 timeout 200 $D/vellum_cuda_check --only-bench --skip-op-bench --model $M 2>$O/fwd.log >/dev/null
  echo "forward-only (graphs on, 1k context): $(grep -E '^decode [0-9]+ seqs' $O/fwd.log | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1: \2 ms \3 tok\/s;/' | tr '\n' ' ')"
fi
e2e() {  # LABEL ARGS...
  local L=$1; shift
  timeout 240 $D/vellum bench -m $M --device cuda -r 1 --max-num-seqs 256 --step-profile "$@" ${EXTRA:-} > $O/e2e-$L.txt 2> $O/e2e-$L.log || tail -2 $O/e2e-$L.log
  echo "== $L: $*"; sed -n '/^| batch/,$p' $O/e2e-$L.txt | grep -v -- '| ---'
}
e2e greedy-128 -p 128 -n 256 -b ${BATCHES:-1,64,256}
e2e topk40-128 -p 128 -n 256 -b ${BATCHES:-1,64,256} --temp 0.8 --top-k 40
[ -z "${SKIP_OPENAI:-}" ] && e2e openai-128 -p 128 -n 128 -b ${OPENAI_BATCHES:-64} --temp 1 --top-k 0 --top-p 1 --min-p 0
