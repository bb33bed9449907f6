#!/usr/bin/env bash
# Round 7 programmatic dependent launch: checks, then batch-1 decode with PDL off / on and GEMV L2
# prefetch sizes; short table last. Copy beside vellum, vellum_cuda_check, lib/, fixtures/,
# run5.sh and stories_greedy.py; run on the GPU machine as: bash DIR/pdl7.sh PHASE...
#   check   run5.sh checks (op checks, stories260K greedy, graphs vs eager with programmatic edges,
#           CPU vs GPU greedy on a synthetic qwen2.5-0.5b)
#   dec:T   synth llama3-8b T; graphs vs eager on it; batch-1 decode (eager / graphs / graphs+PDL)
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
SUM=$O/summary.txt; : > "$SUM"
nvidia-smi -L | tee -a "$SUM"
for P in "$@"; do
  S=$SECONDS
  case $P in
  check)
    OUT=$O bash "$D/run5.sh" checks > "$O/checks.txt" 2>&1
    grep -E "op check exit|FAIL|checks,|greedy|graphs|match|differ" "$O/checks.txt" | cut -c1-200 >> "$SUM" ;;
  dec:*)
    T=${P#dec:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    timeout 80 "$C" --graphs "$M" 2>"$O/graphs-$T.log" | grep -E "cuda graphs" | cut -c1-200 >> "$SUM"
    timeout 80 "$C" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T.log" >/dev/null
    grep -E "decode batch 1" "$O/dec-$T.log" | sed -E "s/^.*\[graphs/$T [graphs/" | cut -c1-160 >> "$SUM"
    rm -f "$M" ;;
  esac
  echo "phase $P: $((SECONDS - S)) s" >> "$SUM"
done
echo "==== summary"; cat "$SUM"
