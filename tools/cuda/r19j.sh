#!/usr/bin/env bash
# Round 19, eleventh call: the layer kernel v4 (four rows an item, one load of x for them, the
# stream's issue side on a cursor; a ring of 3 stages a warp): op checks, traces (ablate 0, 2 no
# rows), model bits, batch 1 on / off twice. Run next to the stripped vellum, vellum_cuda_check and lib/.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
(S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.txt 2>&1; echo "synth $((SECONDS - S)) s" >> $O/synth.txt) &
timeout 150 "$C" --layer-only 2>"$O/layer.log" > "$O/layer.txt"; echo "layer checks exit $?"
grep -E "kernel vs ops|checks," "$O/layer.txt" | cut -c1-120
for A in 0 2; do
  echo "== ablate $A"; VELLUM_CUDA_LAYER_ABLATE=$A timeout 120 "$C" --layer-trace 2>"$O/trace-$A.log" | grep -A17 "layer trace" | grep -v unused
done > $O/trace.txt
wait
timeout 200 "$C" --graphs /tmp/l8b-Q4_K_M.gguf 2>"$O/graphs.log" > "$O/graphs.txt"; echo "graphs exit $?"
grep -E "graphs vs|layer kernel|checks," "$O/graphs.txt" | cut -c1-160
b1() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 100 "$C" --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf 2>"$O/b1-$L.log" >/dev/null
  echo "$L: $(grep 'decode batch 1' $O/b1-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\2 (\3%)/' | tr '\n' ' ')"
}
{ echo "batch 1 tok/s: eager | graphs | graphs+PDL"; b1 on VELLUM_CUDA_LAYER_KERNEL=1; b1 off; b1 on2 VELLUM_CUDA_LAYER_KERNEL=1; b1 off2; } > $O/b1.txt
cat $O/trace.txt $O/b1.txt
