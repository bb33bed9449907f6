#!/usr/bin/env bash
# Round 22: rows_mma checks, tile timings, deterministic proofs and invariance, and the deterministic quick bench
# (rows_mma by type vs off) of llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
(for T in Q4_K_M Q8_0; do [ -f /tmp/l8b-$T.gguf ] || $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 100 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"; grep FAIL $O/det_checks.txt | head -5
timeout 200 $C --rows-mma-bench > $O/rows_bench.txt 2>/dev/null; echo "rows bench exit $?"
grep -E "^rows_mma" $O/rows_bench.txt | sed -E 's/ \(([0-9]+) GB\/s of weights, / (/' | cut -c1-150
printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
  timeout 200 $V proof -m /tmp/p.gguf --device cuda --deterministic --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 96" > $O/proof-$T.txt 2>&1
  echo "proof $T det, 1 seq vs 8 with a 96-token budget (exit $?): $(grep -iE 'identical|differ' $O/proof-$T.txt | tail -2 | tr '\n' ' ' | cut -c1-200)"
  timeout 120 $C --invariance /tmp/p.gguf > $O/inv-$T.txt 2>&1; echo "invariance $T (exit $?): $(grep -E 'invarian|deterministic model' $O/inv-$T.txt | head -3 | cut -c1-200)"
done
wait
for T in ${DET_TYPES:-Q4_K_M Q8_0}; do
  for R in ${RS:-0 -1}; do
    G=$O/detbench-$T-$R.log
    VELLUM_CUDA_ROWS_MMA=$R VELLUM_BENCH_QUICK=1 timeout 250 $C --only-bench --skip-op-bench --deterministic --model /tmp/l8b-$T.gguf > $G 2>&1
    echo "$T det rows_mma=$R (exit $?): b1 $(grep 'decode batch 1' $G | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | sort -u | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | sort -u | tr '\n' ' ')"
  done
done
