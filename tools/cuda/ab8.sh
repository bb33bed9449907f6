#!/usr/bin/env bash
# Round 8 A/B: batch-1 decode (eager / graphs / graphs+PDL), old binary vs new, alternating, per type in TYPES.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in ${TYPES:-BF16 Q8_0 Q4_K_M}; do
  M=/tmp/l8b-$T.gguf; [ -f $M ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o $M > /dev/null 2>&1
  for B in old new old new; do
    X=$D/vellum_cuda_check; [ $B = old ] && X=$D/vellum_cuda_check.old
    env $ENVS timeout 100 $X --only-bench --batch1-only --model $M 2>"$O/ab-$T-$B.log" >/dev/null
    echo "$T $B: $(grep 'decode batch 1' "$O/ab-$T-$B.log" | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')"
  done
  [ -n "$KEEP" ] || rm -f $M
done
