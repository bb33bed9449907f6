#!/usr/bin/env bash
# Round 7, merged: checks and the decisions left open by the round's branches, short table last.
# Copy beside vellum, vellum_cuda_check, lib/, fixtures/, run5.sh and stories_greedy.py; run on the
# GPU machine as: bash DIR/round7.sh PHASE...
#   check   run5.sh checks (op checks, stories260K greedy, graphs vs eager, CPU vs GPU greedy)
#   san     the opt-in many-row SwiGLU checks under compute-sanitizer (first errors kept)
#   dec:T   synth llama3-8b T; graphs vs eager; batch-1 decode (eager / graphs / graphs + PDL) as
#           committed, with PDL into persistent kernels (VELLUM_CUDA_PDL=2), with round 5's decode
#           attention (VELLUM_CUDA_ATTN_DECODE=1) and, for BF16, round 5's GEMV (VELLUM_CUDA_GEMV16=-1)
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
  san)
    timeout 150 compute-sanitizer --tool memcheck --print-limit 3 "$C" --swiglu-rows --bf16-rows > "$O/sanitizer.txt" 2>&1
    echo "sanitizer exit $?" >> "$SUM"
    grep -E "Invalid|at 0x|by thread|Address|ERROR SUMMARY|kernel|FAIL|checks," "$O/sanitizer.txt" | head -24 | cut -c1-220 >> "$SUM" ;;
  dec:*)
    T=${P#dec:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    timeout 80 "$C" --graphs "$M" 2>"$O/graphs-$T.log" | grep -E "cuda graphs" | cut -c1-200 >> "$SUM"
    VARS="default VELLUM_CUDA_PDL=2 VELLUM_CUDA_ATTN_DECODE=1"
    [ "$T" = BF16 ] && VARS="$VARS VELLUM_CUDA_GEMV16=-1"
    for X in $VARS; do
      if [ "$X" = default ]; then E=(); else E=("$X"); fi
      env "${E[@]}" timeout 80 "$C" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T-$X.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-$T-$X.log" | sed -E "s/^.*\[graphs/$T $X [graphs/" | cut -c1-160 >> "$SUM"
    done
    rm -f "$M" ;;
  esac
  echo "phase $P: $((SECONDS - S)) s" >> "$SUM"
done
echo "==== summary"; cat "$SUM"
