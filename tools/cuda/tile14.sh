#!/usr/bin/env bash
# Round 14 experiment: the dequantized weight tile (VELLUM_CUDA_WEIGHT_TILE_MIB) for decode steps of
# 33-256 rows: does a tile that stays in L2 take the write + read of the bf16 copy off DRAM?
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
q() {  # type tile_mib run
  L=$O/q-$1-$2-$3.log
  VELLUM_CUDA_WEIGHT_TILE_MIB=$2 VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --model /tmp/l8b-$1.gguf 2>$L >/dev/null
  echo "$1 tile $2 MiB: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tail -4 | tr '\n' ' ')"
}
for T in Q8_0 Q4_K_M; do for M in 128 16 32; do q $T $M 1; done; done; q Q8_0 128 2; q Q8_0 16 2
