#!/usr/bin/env bash
# Round 9 call 4: vellum proof on the GPU, one sequence at a time vs 8 at once with a 32-token budget, default vs --deterministic.
# Run from a folder holding the stripped vellum, lib/, fixtures/ggml-vocab-llama-spm.gguf and prompts.txt (one prompt a line).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in Q4_K_M F16; do
  "$D/vellum" gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-llama-spm.gguf -o /tmp/p.gguf 2>&1 | tail -1
  for DET in "" "--deterministic"; do
    S=$SECONDS
    timeout 200 "$D/vellum" proof -m /tmp/p.gguf --device cuda $DET --prompts $D/prompts.txt -n 64 --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 32" > $O/proof-$T$DET.txt 2>&1
    echo "== $T ${DET:-default}: exit $?, $((SECONDS - S)) s"; grep -E "^proof: (IDENT|DIFF|side|first|prompt)" $O/proof-$T$DET.txt | head -6 | cut -c1-200; tail -2 $O/proof-$T$DET.txt | cut -c1-200
  done
done
