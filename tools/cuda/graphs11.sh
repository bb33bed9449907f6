#!/usr/bin/env bash
# Round 11: decode graphs above 8 rows. Per type in TYPES, llama3-8b synthetic, 1k context: aggregate
# decode of 1..256 sequences eager and with graphs (VELLUM_CUDA_GRAPH_ROWS, default 256), with the
# captures' host time. Copy next to vellum, vellum_cuda_check and lib/ in a .devcarry folder (as run5.sh).
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in ${TYPES:-BF16 Q4_K_M}; do
  M=/tmp/l8b-$T.gguf; [ -f $M ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o $M > /dev/null 2>&1
  L=$O/agg-$T.log
  VELLUM_BENCH_QUICK=1 VELLUM_CUDA_GRAPH_ROWS=${GRAPH_ROWS:-256} timeout 200 "$D/vellum_cuda_check" --only-bench --skip-op-bench --model $M 2>$L >/dev/null
  echo "bench $T exit $?"
  echo "$T $(grep -E '^decode [0-9]+ seqs' $L | grep greedy | sed -E 's/^decode ([0-9]+) seqs.*\[graphs (o[nf]+)\]: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1\2=\3ms/' | tr '\n' ' ')"
  rm -f $M
done
