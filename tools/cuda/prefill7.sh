#!/usr/bin/env bash
# Round-7 device run (BF16 prefill). Copy next to stripped `vellum`, `vellum_cuda_check` (this branch),
# `vellum_cuda_check.base` (main's, optional), lib/, fixtures/ and stories_greedy.py; logs go to $OUT.
#   run:     op checks, stories260K greedy, graphs vs eager (stories260K, llama3-8b BF16), then the
#            llama3-8b BF16 bench (prefill GEMMs, decode, prefill round 6 path vs bf16 activations,
#            aggregate decode), main's binary on the same model, greedy CPU vs GPU (qwen2.5-0.5b F16).
#   profile: ncu kernel times of the eager steps (`vellum_cuda_check --profile`), then the bench.
# Every phase prints the seconds elapsed; the short table is printed last.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
MODE=${1:-run}
nvidia-smi -L
M=/tmp/l8b-BF16.gguf
("$V" gguf synth --preset llama3-8b --type BF16 -o "$M" > "$O/synth.log" 2>&1; echo "synth done at $SECONDS s") &
SYNTH=$!
if [ "$MODE" = run ]; then
  timeout 170 "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op check exit $? at $SECONDS s"
  T=$(mktemp -d)
  "$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
  python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" > "$O/greedy.txt" 2>&1
  timeout 60 "$C" --graphs "$T/s.gguf" > "$O/graphs.txt" 2>&1; echo "greedy + graphs at $SECONDS s"
fi
wait $SYNTH
if [ "$MODE" = profile ]; then
  timeout 150 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
    "$C" --profile "$M" > "$O/prof-BF16.csv" 2> "$O/prof-BF16.err"; echo "ncu exit $? at $SECONDS s"
fi
timeout 120 "$C" --graphs "$M" --only-bench --skip-op-bench --model "$M" 2>>"$O/bench.log" > "$O/bench.txt"
echo "bench exit $? at $SECONDS s"
if [ -x "$D/vellum_cuda_check.base" ] && [ $SECONDS -lt 200 ]; then
  timeout 60 "$D/vellum_cuda_check.base" --only-bench --skip-op-bench --model "$M" 2>>"$O/base.log" > "$O/base.txt"
  echo "base bench exit $? at $SECONDS s"
fi
rm -f "$M"
if [ "$MODE" = run ] && [ $SECONDS -lt 250 ]; then
  "$V" gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1
  timeout $((285 - SECONDS)) "$C" --compare /tmp/q.gguf 2>"$O/compare.log" > "$O/compare.txt"; echo "compare exit $? at $SECONDS s"
fi
echo "=== summary"
[ -f "$O/check_table.txt" ] && { grep -E "FAIL" "$O/check_table.txt" | head -20; grep -E "rows (9|40|264)|matmul_multi rows|checks," "$O/check_table.txt"; }
[ -f "$O/greedy.txt" ] && tail -1 "$O/greedy.txt"
[ -f "$O/graphs.txt" ] && grep -E "graphs vs eager" "$O/graphs.txt"
[ -f "$O/compare.txt" ] && grep -E "greedy|checks," "$O/compare.txt"
grep -E "graphs vs eager|GEMM|copy|decode|prefill" "$O/bench.txt"
[ -f "$O/base.txt" ] && { echo "--- main's binary:"; grep -E "decode|prefill" "$O/base.txt"; }
echo "total $SECONDS s"
