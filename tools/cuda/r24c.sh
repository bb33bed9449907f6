#!/usr/bin/env bash
# Round 24, calls 3-4 (call 4: with GQA packing): the deterministic mode's attention back on the split path by default,
# the tensor-core spans behind set_det_attention_tc / VELLUM_CUDA_DET_ATTN_TC=1. --det-only (both paths), the
# deterministic proof, invariance and graphs vs eager on llama3.2-1b BF16 (default path), then the quick bench of
# llama3-8b BF16 --deterministic with the knob off and on.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
($V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1) &
timeout 200 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"
grep -E "FAIL" $O/det_checks.txt | head -8 | cut -c1-220
grep -E "deterministic attention" $O/det_checks.txt | cut -c1-220
printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
$V gguf synth --preset llama3.2-1b --type BF16 --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
for E in "VELLUM_CUDA_DET_ATTN_TC=0" "VELLUM_CUDA_DET_ATTN_TC=1"; do
  env $E timeout 150 $V proof -m /tmp/p.gguf --device cuda --deterministic --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 96" > $O/proof.txt 2>&1
  echo "[$E] proof BF16 --deterministic (exit $?): $(grep -iE 'identical|differ' $O/proof.txt | tail -1 | cut -c1-150)"
  env $E timeout 120 $C --invariance /tmp/p.gguf 2>/dev/null | grep -E "deterministic model" | head -1 | cut -c1-200
  env $E timeout 120 $C --deterministic --graphs /tmp/p.gguf 2>/dev/null | grep -E "graphs vs eager" | head -1 | cut -c1-200
done
wait
for E in "VELLUM_CUDA_DET_ATTN_TC=0" "VELLUM_CUDA_DET_ATTN_TC=1"; do
  G=$O/bench-$E.log
  env $E VELLUM_BENCH_QUICK=1 timeout 240 $C --only-bench --skip-op-bench --deterministic --model /tmp/l8b-BF16.gguf > $G 2>&1
  echo "BF16 --deterministic [$E] (exit $?): b1 $(grep 'decode batch 1' $G | grep '\[graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | sort -u | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | 8k/32k $(grep -E '^decode 1 seq x (8|32)k' $G | sed -E 's/.*, ([0-9.]+) tok\/s/\1/' | sort -u | tr '\n' ' ')| $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/' | sort -u | tr '\n' ' ')"
done
