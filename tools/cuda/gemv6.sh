#!/usr/bin/env bash
# Round 6 batch-1 GEMV: checks, then timings; short table last. Copy to DIR beside vellum,
# vellum_cuda_check, lib/ (shared libraries the device lacks), fixtures/ (stories260K) and
# old/vellum_cuda_check (main's binary); run on the GPU machine as: bash DIR/gemv6.sh PHASE...
#   gemv    GEMV timings: backend ops (host-timed) and each int8 kernel variant alone (graph replay)
#   check   op checks, stories260K greedy on the GPU, graphs vs eager on stories260K
#   dec:T   synth llama3-8b T; graphs vs eager on it; batch-1 decode, new binary then old
#   ncu     Nsight Compute sections of the one-shot and persistent int8 kernels (Q4_K, Q8_0)
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check; OLD=$D/old/vellum_cuda_check
SUM=$O/summary.txt; : > "$SUM"
nvidia-smi -L | tee -a "$SUM"
for P in "$@"; do
  S=$SECONDS
  case $P in
  gemv)
    timeout 120 "$C" --only-bench --gemv-only 2>"$O/gemv.log" > "$O/gemv_table.txt"; echo "gemv bench exit $?" >> "$SUM"
    grep -E "^(gemv|matmul_|kernel|device copy)" "$O/gemv.log" | grep -v " f32:" | sed -E 's/ batch 1//; s/ GB\/s = / /; s/ of copy bw//' >> "$SUM" ;;
  check)
    timeout 120 "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op checks exit $?: $(tail -1 "$O/check_table.txt")" >> "$SUM"
    grep -E "FAIL|matmul_multi.*one matmul|matmul_swiglu (Q4_K|Q8_0|Q6_K).*(vs f64|bit)|matmul (Q4_K|Q6_K|Q8_0) .* rows 1 " "$O/check_table.txt" | cut -c1-120 >> "$SUM"
    T=$(mktemp -d)
    "$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
    python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" >> "$SUM" 2>&1
    timeout 60 "$C" --graphs "$T/s.gguf" 2>>"$O/graphs.log" | grep -E "cuda graphs|checks" | cut -c1-150 >> "$SUM" ;;
  dec:*)
    T=${P#dec:}; M=/tmp/l8b-$T.gguf
    [ -f "$M" ] || "$V" gguf synth --preset llama3-8b --type "$T" -o "$M" 2>&1 | tail -1
    echo "synth $T done at $((SECONDS-S)) s" >> "$SUM"
    timeout 80 "$C" --graphs "$M" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T.log" > "$O/dec-$T.txt"
    echo "new $T exit $?" >> "$SUM"; grep -E "cuda graphs" "$O/dec-$T.txt" | cut -c1-150 >> "$SUM"
    grep -E "decode batch 1" "$O/dec-$T.log" | sed 's/^/NEW /' | cut -c1-250 >> "$SUM"
    for X in ${DEC_VARIANTS:-}; do  # the new binary with another int8 kernel variant for every launch
      VELLUM_CUDA_GEMV_I8_VARIANT=$X timeout 60 "$C" --only-bench --batch1-only --model "$M" 2>"$O/dec-$T-v$X.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-$T-v$X.log" | sed "s/^/NEW variant $X /" | cut -c1-250 >> "$SUM"
    done
    if [ -x "$OLD" ]; then
      timeout 60 "$OLD" --only-bench --batch1-only --model "$M" 2>"$O/dec-old-$T.log" >/dev/null
      grep -E "decode batch 1" "$O/dec-old-$T.log" | sed 's/^/OLD /' | cut -c1-250 >> "$SUM"
    fi ;;
  ncu)  # one launch each: Q4_K one-shot and persistent R=4, Q8_0 persistent R=4, all 14336x4096 (NCU_KERNELS)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    for K in ${NCU_KERNELS:-gemv_i8_kernelINS0_6I8Q4_KELi4ELb0 gemv_i8p_kernelINS0_6I8Q4_KELi4ELb0 gemv_i8p_kernelINS0_6I8Q8_0ELi4ELb0}; do
      timeout 50 "$NCU" --clock-control none --kernel-name-base mangled --kernel-name "regex:$K" --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
        --section LaunchStats --section ComputeWorkloadAnalysis "$C" --only-bench --gemv-only > "$O/ncu-$K.txt" 2>/dev/null
      echo "ncu $K exit $?" >> "$SUM"
      grep -E "^ +(Duration|Memory Throughput|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per Thread|Issue Slots Busy|Warp Cycles Per Issued Instruction|Executed Ipc Active|Grid Size|Mem Busy|Max Bandwidth|Mem Pipes Busy|L1/TEX Hit Rate)" \
        "$O/ncu-$K.txt" | sed -E 's/ +/ /g' | head -20 >> "$SUM"
    done ;;
  esac
  echo "== $P: $((SECONDS-S)) s" >> "$SUM"
done
# The device returns only a few files: everything but the summary goes into one archive.
(cd "$O" && tar czf all.tgz --exclude summary.txt --exclude all.tgz . && find . -type f ! -name summary.txt ! -name all.tgz -delete)
cat "$SUM"
