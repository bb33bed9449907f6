#!/usr/bin/env bash
# Round 19, first call: the layer kernel's op checks, llama3-8b Q4_K_M graphs vs eager and layer
# kernel vs its ops (bit for bit), then batch-1 decode with the kernel on and off, alternating.
# Run next to the stripped vellum, vellum_cuda_check and lib/ (a .devcarry folder).
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
(S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.txt 2>&1; echo "synth $((SECONDS - S)) s" >> $O/synth.txt) &
timeout 120 "$C" --layer-only 2>"$O/layer.log" > "$O/layer.txt"; echo "layer checks exit $?"
grep -E "layer_tail|checks," "$O/layer.txt" | cut -c1-200
wait; cat $O/synth.txt | tail -2
timeout 200 "$C" --graphs /tmp/l8b-Q4_K_M.gguf 2>"$O/graphs.log" > "$O/graphs.txt"; echo "graphs exit $?"
grep -E "graphs vs|layer kernel|checks," "$O/graphs.txt" | cut -c1-250
for i in 1 2; do
  for L in 1 0; do
    VELLUM_CUDA_LAYER_KERNEL=$L timeout 100 "$C" --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf 2>"$O/b1-$L-$i.log" >/dev/null
    echo "layer kernel $L run $i: $(grep 'decode batch 1' $O/b1-$L-$i.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\1: \2 (\3%)/' | tr '\n' ';')"
  done
done
