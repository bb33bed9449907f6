#!/usr/bin/env bash
# Round 23: the deterministic proof and invariance (BF16 / F16 llama3.2-1b shape) and graphs vs eager (qwen2.5-0.5b F16)
# with the det16 GEMV's graph edges by VELLUM_CUDA_DET16_PDL (MODES, default "3": full).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
for T in ${TYPES:-BF16}; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  for P in ${MODES:-3}; do
    VELLUM_CUDA_DET16_PDL=$P timeout 150 $V proof -m /tmp/p-$T.gguf --device cuda --deterministic --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 96" > $O/proof-$T-$P.txt 2>&1
    echo "PDL=$P proof $T --deterministic (exit $?): $(grep -iE 'identical|differ' $O/proof-$T-$P.txt | tail -1 | cut -c1-120)"
    VELLUM_CUDA_DET16_PDL=$P timeout 120 $C --invariance /tmp/p-$T.gguf 2>/dev/null | grep -E "deterministic model" | head -1 | cut -c1-160
  done
done
