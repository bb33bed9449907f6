#!/usr/bin/env bash
# Round 7 Q4_K / Q6_K GEMV device run. Copy beside stripped vellum, vellum_cuda_check, lib/,
# fixtures/, stories_greedy.py (a .devcarry folder); run as: bash DIR/q4k7.sh PHASE...
#   check   op checks (every op vs the CPU; the re-laid Q4_K / Q6_K through every consumer),
#           stories260K greedy on the GPU, graphs vs eager on stories260K
#   gemv    GEMV timings: backend ops (host-timed) and each int8 kernel variant alone (graph replay)
#   dec:T   synth llama3-8b T; graphs vs eager on it; batch-1 decode (eager, graphs), then main's
#           binary (old/vellum_cuda_check, if present) on the same model
# Full logs go to $OUT; a short summary is printed last.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
SUM=$O/summary.txt; : > "$SUM"
nvidia-smi -L | tee -a "$SUM"
for P in "$@"; do
  S=$SECONDS
  case $P in
  check)
    timeout ${CHECK_T:-120} "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op checks exit $?: $(tail -1 "$O/check_table.txt")" >> "$SUM"
    grep -E "FAIL|matmul_multi.*one matmul|matmul_swiglu (Q4_K|Q6_K).*(vs f64|bit)|matmul (Q4_K|Q6_K) .*rows 1 |embed (Q4_K|Q6_K)|invariance.*(Q4_K|Q6_K)" "$O/check_table.txt" | cut -c1-140 >> "$SUM"
    T=$(mktemp -d)
    "$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
    python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" >> "$SUM" 2>&1
    timeout 60 "$C" --graphs "$T/s.gguf" 2>>"$O/graphs.log" | grep -E "cuda graphs|checks" | cut -c1-150 >> "$SUM" ;;
  gemv)
    VELLUM_BENCH_GEMV_TYPES=${GEMV_TYPES:-Q4_K,Q6_K} timeout ${GEMV_T:-90} "$C" --only-bench --gemv-only 2>"$O/gemv.log" > "$O/gemv_table.txt"; echo "gemv bench exit $?" >> "$SUM"
    grep -E "^(gemv|matmul_|kernel|device copy)" "$O/gemv.log" | grep -v " f32:" | grep -E "Q4_K|Q6_K|device copy" \
      | sed -E 's/ batch 1//; s/ GB\/s = / /; s/ of copy bw//; s/ outputs differ from r7 R=1 P=1\]/ differ]/' >> "$SUM" ;;
  dec:*)
    T=${P#dec:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    echo "synth $T done at $((SECONDS-S)) s" >> "$SUM"
    timeout ${DEC_T:-90} "$C" --graphs "$M" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T.log" > "$O/dec-$T.txt"
    echo "dec $T exit $?" >> "$SUM"; grep -E "cuda graphs" "$O/dec-$T.txt" | cut -c1-150 >> "$SUM"
    grep -E "decode batch 1|device copy" "$O/dec-$T.log" | sed 's/^/NEW /' | cut -c1-250 >> "$SUM"
    if [ -x "$D/old/vellum_cuda_check" ]; then  # main's binary on the same model, same machine
      timeout ${OLD_T:-60} "$D/old/vellum_cuda_check" --only-bench --batch1-only --model "$M" 2>"$O/dec-old-$T.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-old-$T.log" | sed 's/^/OLD /' | cut -c1-250 >> "$SUM"
    fi ;;
  esac
  echo "== $P: $((SECONDS-S)) s" >> "$SUM"
done
cat "$SUM"
