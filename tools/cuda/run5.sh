#!/usr/bin/env bash
# Round-5 device run. Usage: copy (with stories_greedy.py) next to stripped `vellum`, `vellum_cuda_check`, lib/ and fixtures/
# (a .devcarry folder) and run `run5.sh checks` then `run5.sh bench TYPE...` there; logs go to $OUT.
#   checks: every op vs the CPU (incl. fused ops, argmax, tensor-core attention, int8 mma matmul),
#           stories260K greedy on the GPU (graphs on, default F16 KV) vs llama2.c's run.c text,
#           graph replay vs eager bit for bit, greedy CPU vs GPU on a synthetic qwen2.5-0.5b.
#   bench:  per type, synthetic llama3-8b: graph check, then copy bw, GEMM peak, attention and GEMV
#           benches, decode batch 1 (eager, graphs), prefill 512/2048, aggregate decode 1..256 seqs.
#   profile TYPE: ncu kernel times of one eager decode step (1 and 32 seqs) and a 512-token prefill.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
MODE=${1:-checks}; shift || true
nvidia-smi -L
if [ "$MODE" = checks ]; then
  timeout 400 "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op check exit $?"
  grep -E "FAIL" "$O/check_table.txt" | head -20; tail -1 "$O/check_table.txt"
  T=$(mktemp -d)
  "$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
  python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" 2>&1 | tee "$O/greedy.txt"
  timeout 60 "$C" --graphs "$T/s.gguf" 2>&1 | tail -2 | tee "$O/graphs.txt"
  "$V" gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf 2>&1 | tail -1
  timeout 120 "$C" --compare /tmp/q.gguf --graphs /tmp/q.gguf 2>"$O/compare.log" | tee "$O/compare.txt" | grep -E "greedy|graphs|checks,"
elif [ "$MODE" = bench ]; then
  for T in "$@"; do
    S=$SECONDS; "$V" gguf synth --preset llama3-8b --type "$T" -o "/tmp/l8b-$T.gguf" 2>&1 | tail -1; echo "synth $T: $((SECONDS - S)) s"
    timeout 300 "$C" --graphs "/tmp/l8b-$T.gguf" --only-bench --model "/tmp/l8b-$T.gguf" 2>>"$O/bench-$T.log" > "$O/bench-$T.txt"
    echo "bench $T exit $?"; grep -E "graphs vs eager|decode|prefill|GEMM|copy|checks," "$O/bench-$T.txt"
    rm -f "/tmp/l8b-$T.gguf"
  done
elif [ "$MODE" = profile ]; then
  for T in "$@"; do
    "$V" gguf synth --preset llama3-8b --type "$T" -o "/tmp/l8b-$T.gguf" 2>&1 | tail -1
    timeout 240 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
      "$C" --profile "/tmp/l8b-$T.gguf" > "$O/prof-$T.csv" 2> "$O/prof-$T.err"; echo "ncu $T exit $?"
    rm -f "/tmp/l8b-$T.gguf"
  done
fi
