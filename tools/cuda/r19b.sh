#!/usr/bin/env bash
# Round 19, second call: the layer kernel's op checks, then where its time goes at batch 1
# (llama3-8b Q4_K_M, graphs + PDL): VELLUM_CUDA_LAYER_ABLATE 1 no grid barriers, 2 no row
# arithmetic, 4 no norms/quantization, 8 no weight copies (results wrong, timing only), and the
# kernel off. Run next to the stripped vellum, vellum_cuda_check and lib/.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
(S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.txt 2>&1; echo "synth $((SECONDS - S)) s" >> $O/synth.txt) &
timeout 150 "$C" --layer-only 2>"$O/layer.log" > "$O/layer.txt"; echo "layer checks exit $?"
grep -E "layer_tail|checks," "$O/layer.txt" | cut -c1-220
wait
b1() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 100 "$C" --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf 2>"$O/b1-$L.log" >/dev/null
  echo "$L: $(grep 'decode batch 1' $O/b1-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\2/' | tr '\n' ' ')"
}
{ echo "batch 1 tok/s: eager | graphs | graphs+PDL"
  b1 off VELLUM_CUDA_LAYER_KERNEL=0
  b1 on VELLUM_CUDA_LAYER_KERNEL=1
  for A in 1 2 4 8 7 15; do b1 ablate$A VELLUM_CUDA_LAYER_ABLATE=$A; done
  b1 on2 VELLUM_CUDA_LAYER_KERNEL=1
  b1 off2 VELLUM_CUDA_LAYER_KERNEL=0
} | tee $O/b1.txt
