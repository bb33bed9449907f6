#!/usr/bin/env bash
# Round 14 final call (after the round-5 rule for one-row launches up to 8k): checks + whole-model
# invariance, attention bench, llama3-8b quick benches of BF16 / Q4_K_M / F16 / Q8_0 against round
# 13's binary (vellum_cuda_check.old.xz) and Q4_K_M / BF16 against call 5's (prev: long-context rows).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
xz -dc $D/vellum_cuda_check.old.xz > /tmp/check.old && chmod +x /tmp/check.old
xz -dc $D/vellum_cuda_check.prev.xz > /tmp/check.prev && chmod +x /tmp/check.prev
(for T in BF16 Q4_K_M F16 Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
"$D/vellum" gguf synth --preset qwen2.5-0.5b --type Q4_K_M -o /tmp/q4.gguf > /dev/null 2>&1
timeout 120 $C --invariance /tmp/q.gguf --invariance /tmp/q4.gguf > $O/inv.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; grep -E "deterministic model" $O/inv.txt | cut -c1-200 | sort -u; } > $O/final.txt
timeout 150 $C --attn-bench > $O/attn.txt 2> $O/attn.log
wait
q() {  # binary label type run
  L=$O/quick-$3-$2-$4.log
  VELLUM_BENCH_QUICK=1 timeout 200 $1 --only-bench --skip-op-bench --model /tmp/l8b-$3.gguf 2>$L >/dev/null
  echo "$3 $2: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | b1 $(grep 'decode batch 1' $L | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') | $(grep -E 'prefill (512|2048) tokens \[default' $L | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')| $(grep -E '^decode 1 seq x' $L | sed -E 's/^decode 1 seq x ([0-9]+k).*: ([0-9.]+) ms\/token.*/\1: \2 ms/' | tr '\n' ' ')" >> $O/quick.txt
}
for T in BF16 Q4_K_M F16 Q8_0; do q /tmp/check.old old $T 1; q $C new $T 1; done
for T in Q4_K_M BF16; do q /tmp/check.prev prev $T 2; q $C new $T 2; done
cat $O/final.txt; grep -E "paged decode" $O/attn.log | sed -E 's/\(32q\/8kv x128, //; s/ of copy bw//g' | cut -c1-160; cat $O/quick.txt
