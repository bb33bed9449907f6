#!/usr/bin/env bash
# Round 7 final device run on main, short table last. Copy beside vellum, vellum_cuda_check, lib/,
# fixtures/, run5.sh and stories_greedy.py; run on the GPU machine as: bash DIR/final7.sh PHASE...
#   check    run5.sh checks, then the op checks again without the many-row SwiGLU (--no-swiglu-rows)
#   san      the many-row SwiGLU checks under compute-sanitizer (first errors kept)
#   gemv     host-timed BF16 GEMV ops for each VELLUM_CUDA_GEMV16 in G (default "-1 0 1")
#   dec:T    synth llama3-8b T; batch-1 decode (eager / graphs / graphs + PDL) for each environment
#            setting in VARS (default: as committed, VELLUM_CUDA_GEMV16=1 and =-1; e.g. VELLUM_CUDA_PDL=2,
#            VELLUM_CUDA_ATTN_DECODE=1). Round 7's pdl7.sh, gemv16.sh and round7.sh were these phases.
#   bench:T  synth llama3-8b T; the whole model bench (graphs check, copy bw, GEMM peak, attention,
#            GEMVs, decode batch 1, prefill per path, aggregate decode)
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
SUM=$O/summary.txt; : > "$SUM"
nvidia-smi -L | tee -a "$SUM"
synth() { [ -f "/tmp/l8b-$1.gguf" ] || "$V" gguf synth --preset llama3-8b --type "$1" -o "/tmp/l8b-$1.gguf" > /dev/null 2>&1; }
for P in "$@"; do
  S=$SECONDS
  case $P in
  check)
    OUT=$O bash "$D/run5.sh" checks > "$O/checks.txt" 2>&1
    grep -E "op check exit|FAIL|checks,|greedy|graphs|match|differ" "$O/checks.txt" | cut -c1-200 >> "$SUM"
    timeout 200 "$C" --no-swiglu-rows 2>"$O/check-no-swiglu-rows.log" > "$O/check_table-no-swiglu-rows.txt"
    echo "op checks with --no-swiglu-rows: exit $?" >> "$SUM"
    grep -E "FAIL|checks," "$O/check_table-no-swiglu-rows.txt" | cut -c1-200 >> "$SUM" ;;
  san)
    timeout 150 compute-sanitizer --tool memcheck --print-limit 3 "$C" --bf16-rows > "$O/sanitizer.txt" 2>&1
    echo "sanitizer exit $?" >> "$SUM"
    grep -E "Invalid|at 0x|by thread|Address|ERROR SUMMARY|FAIL|checks," "$O/sanitizer.txt" | head -24 | cut -c1-220 >> "$SUM" ;;
  gemv)
    for X in ${G:--1 0 1}; do
      VELLUM_CUDA_GEMV16=$X VELLUM_BENCH_GEMV_TYPES=BF16 timeout 120 "$C" --only-bench --gemv-only 2>"$O/gemv-v$X.log" >/dev/null
      grep -E "^(gemv|matmul_)" "$O/gemv-v$X.log" | grep BF16 | sed "s/^/v$X /" | cut -c1-150 >> "$SUM"
    done ;;
  dec:*)
    T=${P#dec:}; synth "$T"; M=/tmp/l8b-$T.gguf
    for X in ${VARS:-default VELLUM_CUDA_GEMV16=1 VELLUM_CUDA_GEMV16=-1}; do
      if [ "$X" = default ]; then E=(); else E=("$X"); fi
      env "${E[@]}" timeout 80 "$C" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T-${X#*=}.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-$T-${X#*=}.log" | sed -E "s/^.*\[graphs/$T $X [graphs/" | cut -c1-160 >> "$SUM"
    done ;;
  bench:*)
    T=${P#bench:}; synth "$T"; M=/tmp/l8b-$T.gguf
    timeout 400 "$C" --graphs "$M" --only-bench --model "$M" 2>"$O/bench-$T.log" > "$O/bench-$T.txt"
    echo "bench $T exit $?" >> "$SUM"
    grep -E "cuda graphs vs eager|checks," "$O/bench-$T.txt" | cut -c1-200 >> "$SUM"
    grep -E "^(device copy|cuBLAS BF16 GEMM|decode batch 1|prefill [0-9]+ tokens|decode [0-9]+ seqs|paged decode attention)" "$O/bench-$T.log" \
      | grep -v "all logits" | sed -E 's#/tmp/l8b-##; s/ \(so far: [^)]*\)//' | cut -c1-170 >> "$SUM"
    rm -f "$M" ;;
  esac
  echo "phase $P: $((SECONDS - S)) s" >> "$SUM"
done
echo "==== summary"; cat "$SUM"
