#!/usr/bin/env bash
# Round 12 final call: checks (run5.sh checks: copy run5.sh, stories_greedy.py and fixtures/ beside it), batch-1
# A/B against main before the round (vellum_cuda_check.old) alternating, then the quick model bench of the new
# binary per type (batch 1, prefill 512 / 2048, aggregate decode 1..256 sequences x 1k).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in BF16 Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done
bash $D/run5.sh checks > $O/run5.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; } > $O/final.txt
wait
N=$D/vellum_cuda_check
for T in BF16 Q8_0 Q4_K_M; do
  M=/tmp/l8b-$T.gguf
  for B in old new old new; do
    X=$N; [ $B = old ] && X=$D/vellum_cuda_check.old
    timeout 100 $X --only-bench --batch1-only --model $M 2>"$O/b1-$T-$B.log" >/dev/null
    echo "$T $B: $(grep 'decode batch 1' "$O/b1-$T-$B.log" | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')" >> $O/ab.txt
  done
  L=$O/quick-$T.log
  VELLUM_BENCH_QUICK=1 timeout 200 $N --only-bench --skip-op-bench --model $M 2>$L >/dev/null
  echo "$T: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | b1 $(grep 'decode batch 1' $L | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/' | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens' $L | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
done
cat $O/final.txt; cat $O/ab.txt; cat $O/quick.txt
