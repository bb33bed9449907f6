#!/usr/bin/env bash
# Round 7: 8-sequence aggregate decode of llama3-8b Q8_0 / Q4_K_M with mmq registered (default) vs PDL off vs PDL into everything.
D=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in Q8_0 Q4_K_M; do
  "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/m.gguf > /dev/null 2>&1
  for X in default VELLUM_CUDA_PDL=0 VELLUM_CUDA_PDL=2; do
    if [ "$X" = default ]; then E=(); else E=("$X"); fi
    env "${E[@]}" timeout 150 "$D/vellum_cuda_check" --only-bench --model /tmp/m.gguf 2>&1 >/dev/null | grep -E "decode (1|8|32) seqs.*greedy|decode batch 1.*graphs on\]" | sed -E "s/^/$T $X: /; s/ \(so far: [^)]*\)//; s#/tmp/m.gguf##" | cut -c1-150
  done
done
