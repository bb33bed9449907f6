#!/usr/bin/env bash
# Round 20: decode graphs launched early (StepGraphs::launch_early). Checks: early launch vs none bit
# for bit (--early: hits and misses) on stories260K, a synthetic qwen2.5-0.5b and llama3-8b Q4_K_M;
# graphs vs eager on llama3-8b Q4_K_M; proofs of identical runs and of drawn vs whole rows. Then
# batch 1 forward-only with it on and off (alternating), and `vellum bench --step-profile` at 1 and
# 64 sequences. Run next to the stripped vellum, vellum_cuda_check, lib/ and fixtures/; logs in $OUT.
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
M=/tmp/l8b-dsv.gguf; Q=/tmp/l8b-Q4_K_M.gguf
[ -f $M ] || ($V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1) &
[ -f $Q ] || ($V gguf synth --preset llama3-8b --type Q4_K_M -o $Q > $O/synth2.log 2>&1) &
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
$V gguf synth --preset qwen2.5-0.5b --type F16 -o $T/q.gguf > /dev/null 2>&1
wait
timeout 300 $C --early $T/s.gguf --early $T/q.gguf --early $M --graphs $Q 2>$O/early.log > $O/early.txt; echo "checks exit $?"
grep -E "early launch|graphs vs|layer kernel|checks," $O/early.txt | cut -c1-250
printf '%s\n' "Once upon a time" "The little dog" "Lily and Tom went to the park" "One day, a big bird" "The sun was" "Mom said" "Tim had a red ball" "In the forest" > $T/p.txt
proof() {  # LABEL ARGS...
  local L=$1; shift
  timeout 150 $V proof -m $M --device cuda --prompts $T/p.txt --ignore-eos -n 48 "$@" > $O/proof-$L.txt 2>&1
  echo "proof $L: $(grep -E 'IDENTICAL|DIFFERENT' $O/proof-$L.txt | tail -1)"
}
S="--temp 1 --top-k 0 --top-p 1 --min-p 0"
proof same $S --a "" --b ""
proof drawn-vs-whole $S -s 7 --a "" --b "--whole-logits"
proof greedy-seq1 --a "--max-num-seqs 1" --b "--max-num-seqs 1 --whole-logits"
b1() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 100 $C --only-bench --batch1-only --model $Q 2>"$O/b1-$L.log" >/dev/null
  echo "$L: $(grep 'decode batch 1' $O/b1-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\1 \2 (\3%)/' | tr '\n' ' ')"
}
for rep in 1 2; do b1 early-on X=1; b1 early-off VELLUM_CUDA_EARLY_LAUNCH=0; done
for B in 1 64; do
  timeout 120 $V bench -m $M --device cuda -r 1 -p 128 -n 256 -b $B --step-profile > $O/b$B.txt 2>&1
  echo "b$B: $(grep -E '^\|  *[0-9]' $O/b$B.txt | tail -1 | cut -c1-120)"; grep '^backend:' $O/b$B.txt
done
