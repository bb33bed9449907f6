#!/usr/bin/env bash
# Round 23: where the deterministic mode's BF16 batch-1 token goes against the default's (llama3-8b BF16, graphs + PDL):
# VELLUM_CUDA_ABLATE 0 (everything), 15 (GEMVs only), 16 (everything but the GEMVs).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
[ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
for M in "" --deterministic; do for A in 0 15 16; do
  VELLUM_CUDA_ABLATE=$A VELLUM_BENCH_QUICK=1 timeout 120 $C --only-bench --batch1-only $M --model /tmp/l8b-BF16.gguf > $O/b1-$A$M.txt 2>&1
  echo "${M:-default} ablate $A: $(grep 'decode batch 1' $O/b1-$A$M.txt | grep '\[graphs on\]' | tail -1 | sed -E 's/.*\]: //' | cut -c1-80)"
done; done
