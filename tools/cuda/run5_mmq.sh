#!/usr/bin/env bash
# Usage: copy next to stripped `vellum`, `vellum_cuda_check`, lib/ and fixtures/ (a .devcarry folder)
# and run it there; logs go to $OUT. Raw output of the 2026-11-21 run: results/h200-r5-mmq-final*.txt.
# Round 5 mmq, final: op checks, stories260K greedy + graphs, llama3-8b Q4_K_M and Q8_0: graphs
# bit-identity and timings with the committed dispatch (mmq up to 256 rows). Summary in $O/summary.txt.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
exec > >(tee -a "$O/summary.txt") 2>&1
nvidia-smi -L
S0=$SECONDS
S=$SECONDS; timeout 110 "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op check exit $? $((SECONDS-S)) s"
grep -E "FAIL|checks," "$O/check_table.txt" | cut -c1-160
T=$(mktemp -d)
"$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
timeout 40 python3 "$D/stories_greedy.py" "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json"
timeout 30 "$C" --graphs "$T/s.gguf" 2>/dev/null | grep "graphs vs eager"
for TY in Q4_K_M Q8_0; do
  M=/tmp/l8b-$TY.gguf
  S=$SECONDS; "$V" gguf synth --preset llama3-8b --type $TY -o $M 2>&1 | tail -1; echo "synth $TY $((SECONDS-S)) s"
  S=$SECONDS; echo "graphs $TY:"; timeout 40 "$C" --graphs $M 2>/dev/null | grep "graphs vs eager"; echo "graphs $((SECONDS-S)) s"
  S=$SECONDS; timeout 90 "$C" --only-bench --skip-op-bench --model $M 2>"$O/final-$TY.log" >/dev/null; echo "final $TY exit $? $((SECONDS-S)) s"
  grep -hE "GEMM 8192|device copy|^model|prefill|seqs|decode batch" "$O/final-$TY.log" | sed 's/ x 1k context, F16 KV//'
  rm -f $M
done
echo "==== total $((SECONDS-S0)) s"
