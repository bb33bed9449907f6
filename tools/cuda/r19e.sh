#!/usr/bin/env bash
# Round 19, fifth call: the layer kernel's trace (where a launch spends its time, llama3-8b shapes),
# default and with parts switched off (VELLUM_CUDA_LAYER_ABLATE 2 no row arithmetic, 8 no copies,
# 15 nothing), then batch 1 on / off. Run next to the stripped vellum, vellum_cuda_check and lib/.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
(S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.txt 2>&1; echo "synth $((SECONDS - S)) s" >> $O/synth.txt) &
for A in 0 2 8 15; do
  echo "== ablate $A"; VELLUM_CUDA_LAYER_ABLATE=$A timeout 120 "$C" --layer-trace 2>"$O/trace-$A.log" | grep -A17 "layer trace"
done | tee $O/trace.txt
wait
b1() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 100 "$C" --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf 2>"$O/b1-$L.log" >/dev/null
  echo "$L: $(grep 'decode batch 1' $O/b1-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\2/' | tr '\n' ' ')"
}
{ echo "batch 1 tok/s: eager | graphs | graphs+PDL"; b1 on VELLUM_CUDA_LAYER_KERNEL=1; b1 off; } | tee $O/b1.txt
