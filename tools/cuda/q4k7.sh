#!/usr/bin/env bash
# Round 7 Q4_K / Q6_K GEMV device run. Copy beside stripped vellum, vellum_cuda_check, lib/,
# fixtures/, stories_greedy.py (a .devcarry folder); run as: bash DIR/q4k7.sh PHASE...
#   check   op checks (every op vs the CPU; the re-laid Q4_K / Q6_K through every consumer),
#           stories260K greedy on the GPU, graphs vs eager on stories260K
#   gemv    GEMV timings: backend ops (host-timed) and each int8 kernel variant alone (graph replay)
#   mmq     many-row Q4_K / Q6_K matmul timings (int8 mma), then main's binary (old/, if present)
#   ncu     Nsight Compute sections of one launch of each NCU_KERNELS regex (the Q4_K GEMV bench)
#   dec:T   synth llama3-8b T; graphs vs eager on it; batch-1 decode (eager, graphs), then main's
#           binary (old/vellum_cuda_check, if present) on the same model
# Full logs go to $OUT; each phase prints its summary lines when it ends.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
SUM=$O/summary.txt; : > "$SUM"
nvidia-smi -L | tee -a "$SUM"; SHOWN=$(wc -l < "$SUM")
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
  mmq)  # many-row matmul (int8 mma) on the new layouts vs main's binary: Q4_K / Q6_K lines
    timeout ${MMQ_T:-60} "$C" --only-bench --skip-op-bench --mmq-bench 2>"$O/mmq.log" >/dev/null; echo "mmq bench exit $?" >> "$SUM"
    grep -E "Q4_K|Q6_K" "$O/mmq.log" | sed 's/^/NEW /' | cut -c1-200 >> "$SUM"
    if [ -x "$D/old/vellum_cuda_check" ]; then
      timeout ${MMQ_T:-60} "$D/old/vellum_cuda_check" --only-bench --skip-op-bench --mmq-bench 2>"$O/mmq-old.log" >/dev/null
      grep -E "Q4_K|Q6_K" "$O/mmq-old.log" | sed 's/^/OLD /' | cut -c1-200 >> "$SUM"
    fi ;;
  ncu)  # one launch each of the kernels named by NCU_KERNELS (regexes on mangled names), Q4_K GEMV bench
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    for K in ${NCU_KERNELS:-7GemvQ4KELi1ELb0ELi2E 7GemvQ4KELi1ELb0ELi4E}; do
      VELLUM_BENCH_GEMV_TYPES=Q4_K timeout ${NCU_T:-50} "$NCU" --clock-control none --kernel-name-base mangled --kernel-name "regex:$K" --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
        --section LaunchStats --section ComputeWorkloadAnalysis "$C" --only-bench --gemv-only > "$O/ncu-$K.txt" 2>/dev/null
      echo "ncu $K exit $?" >> "$SUM"
      grep -E "^ +(Duration|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per Thread|Issue Slots Busy|Warp Cycles Per Issued Instruction|Executed Ipc Active|Grid Size|Theoretical Occupancy|L1/TEX Hit Rate)" \
        "$O/ncu-$K.txt" | sed -E 's/ +/ /g' | head -16 >> "$SUM"
    done ;;
  esac
  echo "== $P: $((SECONDS-S)) s" >> "$SUM"
  tail -n +$((SHOWN + 1)) "$SUM"; SHOWN=$(wc -l < "$SUM")  # each phase's lines as it ends (a cut call keeps them)
done
