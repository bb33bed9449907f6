#!/usr/bin/env bash
# Round 19 final call: the committed binary's checks (run5.sh: every op vs the CPU, the layer
# kernel's among them; stories260K greedy; graphs vs eager; CPU vs GPU greedy), llama3-8b Q4_K_M
# graphs vs eager and layer kernel vs its ops (bit for bit), the layer trace, and batch 1 with the
# kernel on and off. Run next to the stripped vellum, vellum_cuda_check, lib/, fixtures/, run5.sh
# and stories_greedy.py.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
(S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.txt 2>&1; echo "synth $((SECONDS - S)) s" >> $O/synth.txt) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
wait
timeout 200 "$C" --graphs /tmp/l8b-Q4_K_M.gguf 2>"$O/graphs-q4.log" > "$O/graphs-q4.txt"
timeout 120 "$C" --layer-trace 2>/dev/null | grep -A17 "layer trace" > $O/trace.txt
b1() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 100 "$C" --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf 2>"$O/b1-$L.log" >/dev/null
  echo "$L: $(grep 'decode batch 1' $O/b1-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\2 (\3%)/' | tr '\n' ' ')"
}
{ echo "batch 1 tok/s: eager | graphs | graphs+PDL"; b1 on VELLUM_CUDA_LAYER_KERNEL=1; b1 off; } > $O/b1.txt
{ tail -1 $O/check_table.txt; grep -E "FAIL" $O/check_table.txt | head; grep -E "layer_tail" $O/check_table.txt | cut -c1-150
  grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-200; grep -E "graphs vs|layer kernel|checks," $O/graphs-q4.txt | cut -c1-200
  cat $O/trace.txt $O/b1.txt; } > $O/final.txt
cat $O/final.txt
