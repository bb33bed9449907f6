#!/usr/bin/env bash
# Round 8: many-row quantized matmuls. Per type in TYPES, llama3-8b synthetic: prefill 512/2048 (default path)
# and aggregate decode 1..256 seqs x 1k (eager; graphs at <= 8), old binary vs new under each setting in SETS.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
if [ -n "$CHECK" ]; then
  timeout 200 "$D/vellum_cuda_check" > "$O/check_table.txt" 2> "$O/check.log"; echo "op checks exit $?: $(tail -1 "$O/check_table.txt")"
  grep FAIL "$O/check_table.txt" | head -5
fi
for T in ${TYPES:-Q4_K_M}; do
  M=/tmp/l8b-$T.gguf; [ -f $M ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o $M > /dev/null 2>&1
  for S in ${SETS:-old default VELLUM_CUDA_MMQ_MAX_ROWS=64 VELLUM_CUDA_MMQ_MAX_ROWS=16 VELLUM_CUDA_WEIGHT_TILE_MIB=64}; do
    X=$D/vellum_cuda_check; E=(); [ $S = old ] && X=$D/vellum_cuda_check.old; [[ $S == *=* ]] && E=(${S//,/ })
    L="$O/agg-$T-$(echo "$S" | tr -c "A-Za-z0-9\n" _).log"
    env VELLUM_BENCH_QUICK=1 "${E[@]}" timeout 150 $X --only-bench --skip-op-bench --model $M 2>"$L" >/dev/null
    P=$(grep -E '^prefill (512|2048) tokens \[default' "$L" | sed -E 's/^prefill ([0-9]+) tokens.*\]: ([0-9]+) tok\/s.*= ([0-9.]+)%.*/\1:\2(\3%)/' | tr '\n' ' ')
    A=$(grep -E '^decode [0-9]+ seqs' "$L" | grep greedy | grep -E 'graphs (on\]|off\])' | sed -E 's/^decode ([0-9]+) seqs.*\[graphs (o[nf]+)\]: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1\2=\4/' | tr '\n' ' ')
    H=$(grep -E '^dequantization ahead' "$L" | sed -E 's/dequantization ahead so far: //')
    echo "$T $S | $P| $A| ahead: $H"
  done
  [ -n "$KEEP" ] || rm -f $M
done
