#!/usr/bin/env bash
# Batch-1 decode (eager / graphs / graphs+PDL) of the new binary under each environment setting in SETS, alternating.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in ${TYPES:-BF16 Q4_K_M}; do
  M=/tmp/l8b-$T.gguf; [ -f $M ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o $M > /dev/null 2>&1
  for rep in 1 2; do for S in ${SETS:-default}; do
    E=(); [[ $S == *=* ]] && E=(${S//,/ })
    env "${E[@]}" timeout 100 "$D/vellum_cuda_check" --only-bench --batch1-only --model $M 2>"$O/envab-$T.log" >/dev/null
    echo "$T $S: $(grep 'decode batch 1' "$O/envab-$T.log" | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')"
  done; done
  [ -n "$KEEP" ] || rm -f $M
done
