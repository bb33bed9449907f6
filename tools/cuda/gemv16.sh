#!/usr/bin/env bash
# Round 7 batch-1 GEMV for F16/BF16 weights (gemv16p_kernel): checks, then timings; short table
# last. Copy beside vellum, vellum_cuda_check, lib/, fixtures/, run5.sh and stories_greedy.py; run
# on the GPU machine as: bash DIR/gemv16.sh PHASE...
#   check   run5.sh checks (op checks incl. fused bit equality, stories260K greedy, graphs vs eager,
#           CPU vs GPU greedy on a synthetic qwen2.5-0.5b)
#   gemv    host-timed BF16 GEMV ops for VELLUM_CUDA_GEMV16 = -1 (round 5's kernel), 0, 4
#   dec:T   synth llama3-8b T; graphs vs eager; batch-1 decode for the same three variants
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
  gemv)
    for X in -1 0 4; do
      VELLUM_CUDA_GEMV16=$X VELLUM_BENCH_GEMV_TYPES=BF16 timeout 120 "$C" --only-bench --gemv-only 2>"$O/gemv-v$X.log" >/dev/null
      grep -E "^(gemv|matmul_)" "$O/gemv-v$X.log" | grep BF16 | sed "s/^/v$X /" | cut -c1-150 >> "$SUM"
    done ;;
  dec:*)
    T=${P#dec:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    timeout 80 "$C" --graphs "$M" 2>"$O/graphs-$T.log" | grep -E "cuda graphs" | cut -c1-200 >> "$SUM"
    for X in -1 0 4; do
      VELLUM_CUDA_GEMV16=$X timeout 80 "$C" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T-v$X.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-$T-v$X.log" | sed -E "s/^.*\[graphs/$T v$X [graphs/" | cut -c1-160 >> "$SUM"
    done
    rm -f "$M" ;;
  esac
  echo "phase $P: $((SECONDS - S)) s" >> "$SUM"
done
echo "==== summary"; cat "$SUM"
