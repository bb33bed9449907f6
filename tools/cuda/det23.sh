#!/usr/bin/env bash
# Round 23: the deterministic mode's F16/BF16 matmuls on tensor cores (det_mma16.h). Stages (STAGES, default all):
# checks (--det-only), kbench (kernel alone vs round 9's rows GEMV and the default mode's kernels), proof (proof and
# invariance on synthetic llama3.2-1b BF16 / F16), e2e (the quick bench of llama3-8b BF16, deterministic vs default).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
S=${STAGES:-checks kbench proof e2e}
nvidia-smi -L
has() { [[ " $S " == *" $1 "* ]]; }
if has e2e; then ([ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1) & fi
if has checks; then
  timeout 150 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"
  grep -E "FAIL" $O/det_checks.txt | head -8 | cut -c1-220
  grep -E "deterministic (BF16|F16)" $O/det_checks.txt | cut -c1-200
fi
if has kbench; then
  timeout 200 $C --det16-bench > $O/det16_bench.txt 2>&1; echo "det16 bench exit $?"
  grep -E "^det16" $O/det16_bench.txt | cut -c1-200
fi
if has proof; then
  printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
  for T in BF16 F16; do
    $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
    for M in --deterministic ""; do
      timeout 150 $V proof -m /tmp/p.gguf --device cuda $M --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 96" > $O/proof-$T$M.txt 2>&1
      echo "proof $T ${M:-default}, 1 seq vs 8 with a 96-token budget (exit $?): $(grep -iE 'identical|differ' $O/proof-$T$M.txt | tail -2 | tr '\n' ' ' | cut -c1-200)"
    done
    timeout 120 $C --invariance /tmp/p.gguf > $O/inv-$T.txt 2>&1; echo "invariance $T (exit $?): $(grep -E 'invarian|deterministic model' $O/inv-$T.txt | head -3 | cut -c1-200)"
  done
fi
wait
if has e2e; then
  for M in --deterministic ""; do
    G=$O/bench-BF16$M.log
    VELLUM_BENCH_QUICK=1 timeout ${E2E_T:-200} $C --only-bench --skip-op-bench $M --model /tmp/l8b-BF16.gguf > $G 2>&1
    echo "BF16 ${M:-default} (exit $?): b1 $(grep 'decode batch 1' $G | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | sort -u | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.*/\1: \2/' | sort -u | tr '\n' ' ')"
  done
fi
