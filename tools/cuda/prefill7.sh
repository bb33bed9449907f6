#!/usr/bin/env bash
# Round-7 device run (BF16 prefill). Copy next to stripped `vellum`, `vellum_cuda_check` (this branch),
# `vellum_cuda_check.base` (main's, optional), lib/, fixtures/, stories_greedy.py and ncu_summary.py;
# logs go to $OUT. Every phase prints the seconds elapsed; the short table is printed last.
#   run:   op checks, stories260K greedy, graphs vs eager (stories260K, llama3-8b BF16), the llama3-8b
#          BF16 bench (prefill GEMMs, decode, prefill per path, aggregate decode), main's binary on the
#          same model, greedy CPU vs GPU (synthetic qwen2.5-0.5b F16).
#   final: op checks; the many-row bf16 checks alone in a fresh process (under compute-sanitizer if
#          they fail) and a raw cuBLAS strided-batched probe; greedy, graphs, the bench, ncu of the
#          eager steps (bf16 activations, then round 6's path), greedy CPU vs GPU.
# The many-row SwiGLU is opt-in since the second call (docs/cuda.md, round 7): to check it, run
# `vellum_cuda_check --swiglu-rows --bf16-rows` (the flag first); the bench times it as variants.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
MODE=${1:-run}
nvidia-smi -L
M=/tmp/l8b-BF16.gguf
("$V" gguf synth --preset llama3-8b --type BF16 -o "$M" > "$O/synth.log" 2>&1; echo "synth done at $SECONDS s") &
SYNTH=$!
timeout 120 "$C" 2>"$O/check.log" > "$O/check_table.txt"; CRC=$?; echo "op check exit $CRC at $SECONDS s"
if [ "$MODE" = final ]; then
  timeout 40 "$C" --bf16-rows > "$O/rows.txt" 2>&1; RC=$?; echo "bf16 rows (fresh process) exit $RC at $SECONDS s"
  if [ $RC -ne 0 ]; then
    timeout 45 compute-sanitizer --tool memcheck "$C" --bf16-rows > "$O/sanitizer.txt" 2>&1; echo "sanitizer exit $? at $SECONDS s"
    VELLUM_CUDA_GEMM_PAIRS=0 timeout 30 "$C" --bf16-rows > "$O/rows-nopairs.txt" 2>&1; echo "bf16 rows, no pairs: exit $?"
  fi
  if [ $CRC -ne 0 ]; then
    VELLUM_CUDA_GEMM_PAIRS=0 timeout 90 "$C" 2>"$O/check-nopairs.log" > "$O/check_table-nopairs.txt"; echo "op check, no pairs: exit $? at $SECONDS s"
  fi
  timeout 30 "$C" --pair-probe > "$O/probe.txt" 2>&1; echo "probe exit $? at $SECONDS s"
fi
T=$(mktemp -d)
"$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" > "$O/greedy.txt" 2>&1
timeout 60 "$C" --graphs "$T/s.gguf" > "$O/graphs.txt" 2>&1; echo "greedy + graphs at $SECONDS s"
wait $SYNTH
timeout 60 "$C" --graphs "$M" --only-bench --skip-op-bench --model "$M" 2>>"$O/bench.log" > "$O/bench.txt"
echo "bench exit $? at $SECONDS s"
if [ "$MODE" = run ] && [ -x "$D/vellum_cuda_check.base" ]; then
  timeout 60 "$D/vellum_cuda_check.base" --only-bench --skip-op-bench --model "$M" 2>>"$O/base.log" > "$O/base.txt"
  echo "base bench exit $? at $SECONDS s"
fi
if [ "$MODE" = final ]; then
  NCU="ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv"
  timeout 60 $NCU "$C" --profile "$M" > "$O/prof-BF16.csv" 2> "$O/prof-BF16.err"; echo "ncu exit $? at $SECONDS s"
  if [ $SECONDS -lt 200 ]; then  # the same steps on round 6's path (same binary)
    VELLUM_CUDA_BF16_ACT=0 timeout 50 $NCU "$C" --profile "$M" > "$O/prof-BF16-r6.csv" 2> "$O/prof-BF16-r6.err"
    echo "ncu (round 6 path) exit $? at $SECONDS s"
  fi
fi
rm -f "$M"
if [ $SECONDS -lt 255 ]; then
  "$V" gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1
  timeout $((285 - SECONDS)) "$C" --compare /tmp/q.gguf 2>"$O/compare.log" > "$O/compare.txt"; echo "compare exit $? at $SECONDS s"
fi
echo "=== summary"
grep -E "FAIL" "$O/check_table.txt" | head -10
grep -E "rows (9|40|264)|checks,|vellum_cuda_check:" "$O/check_table.txt" "$O/check.log" | cut -c1-230
[ -f "$O/check_table-nopairs.txt" ] && { echo "--- op checks without pairs:"; grep -E "FAIL|checks," "$O/check_table-nopairs.txt" | head; }
for f in rows sanitizer rows-nopairs probe; do
  [ -f "$O/$f.txt" ] && { echo "--- $f:"; grep -E "ERROR SUMMARY|Invalid|pair probe|FAIL|checks,|vellum_cuda_check:|one batched|two GEMMs" "$O/$f.txt" | cut -c1-230 | head -12; }
done
tail -1 "$O/greedy.txt"
grep -E "graphs vs eager" "$O/graphs.txt" | tail -1
[ -f "$O/compare.txt" ] && grep -E "checks,|FAIL" "$O/compare.txt"
for p in prof-BF16 prof-BF16-r6; do
  [ -f "$O/$p.csv" ] && python3 "$D/ncu_summary.py" "$O/$p.csv" > "$O/$p-summary.txt" 2>&1 && { echo "--- $p"; grep -A12 "prefill" "$O/$p-summary.txt" | cut -c1-150; }
done
grep -E "graphs vs eager|GEMM 8192|copy|decode batch 1|prefill [0-9]+ tokens|decode (8|32|128|256) seqs.*greedy.*off" "$O/bench.txt" | cut -c1-200
[ -f "$O/base.txt" ] && { echo "--- main's binary:"; grep -E "decode|prefill" "$O/base.txt"; }
echo "total $SECONDS s"
