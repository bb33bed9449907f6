#!/usr/bin/env bash
# Copy to DIR beside vellum, vellum_cuda_check, lib/ (shared libraries the device lacks), fixtures/ (stories260K)
# and old/vellum_cuda_check (the binary to compare with); run on the GPU machine as: bash DIR/fuse5.sh check gemv dec:Q4_K_M
# Round 5 fused decode: checks, then timings; short table last. Usage: go.sh PHASE...
#   check   op checks (new binary), stories260K greedy on the GPU, graphs vs eager on stories260K
#   gemv    GEMV / fused-launch timings (new binary)
#   dec:T   synth llama3-8b T; graphs vs eager on it; batch-1 decode old binary then new (graphs off/on)
#   prof:T  ncu kernel times of one eager step (new binary)
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check; OLD=$D/old/vellum_cuda_check
SUM=$O/summary.txt; : > "$SUM"
nvidia-smi -L | tee -a "$SUM"
for P in "$@"; do
  S=$SECONDS
  case $P in
  check)
    timeout 150 "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op checks exit $?: $(tail -1 "$O/check_table.txt")" >> "$SUM"
    grep -E "FAIL|add_rms|matmul_multi|matmul_swiglu|rope_store|matmul (Q4_K|Q6_K|Q8_0|BF16) .* rows 1 " "$O/check_table.txt" | cut -c1-150 >> "$SUM"
    T=$(mktemp -d)
    "$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
    python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" >> "$SUM" 2>&1
    timeout 60 "$C" --graphs "$T/s.gguf" 2>>"$O/graphs.log" | grep -E "cuda graphs|checks" >> "$SUM" ;;
  gemv)
    timeout 100 "$C" --only-bench --gemv-only 2>"$O/gemv.log" > "$O/gemv_table.txt"; echo "gemv bench exit $?" >> "$SUM"
    grep -E "^(gemv|matmul_|device copy)" "$O/gemv_table.txt" >> "$SUM" ;;
  dec:*)
    T=${P#dec:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    echo "synth $T done at $((SECONDS-S)) s" >> "$SUM"
    timeout 80 "$C" --graphs "$M" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T.log" > "$O/dec-$T.txt"
    echo "new $T exit $?" >> "$SUM"; grep -E "cuda graphs|decode batch 1" "$O/dec-$T.txt" | sed 's/^/NEW /' | cut -c1-260 >> "$SUM"
    if [ -x "$OLD" ] && [ -z "${NO_OLD:-}" ]; then
      timeout 60 "$OLD" --only-bench --model "$M" 2>"$O/dec-old-$T.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-old-$T.log" | sed 's/^/OLD /' | cut -c1-260 >> "$SUM"
    fi ;;
  prof:*)
    T=${P#prof:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    timeout 200 "$NCU" --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
      "$C" --profile "$M" > "$O/prof-$T.csv" 2> "$O/prof-$T.err"; echo "ncu $T exit $?" >> "$SUM"
    python3 tools/cuda/ncu_summary.py "$O/prof-$T.csv" > "$O/prof-$T.txt" 2>&1; head -24 "$O/prof-$T.txt" | cut -c1-120 >> "$SUM" ;;
  esac
  echo "== $P: $((SECONDS-S)) s" >> "$SUM"
done
cat "$SUM"
