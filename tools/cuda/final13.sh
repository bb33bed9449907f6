#!/usr/bin/env bash
# Round 13 final call: checks (run5.sh), then llama3-8b Q4_K_M / Q8_0 quick bench (dq_mma by default on 14 336-row K-quant weights at 33-128 rows) vs the round-12 binary.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done
bash $D/run5.sh checks > $O/run5.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; } > $O/final.txt
wait
for T in Q4_K_M Q8_0; do for B in old new old new; do
  X=$D/vellum_cuda_check; [ $B = old ] && X=$D/vellum_cuda_check.old
  L=$O/quick-$T-$B.log
  VELLUM_BENCH_QUICK=1 timeout 200 $X --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf 2>$L >/dev/null
  echo "$T $B: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | b1 $(grep 'decode batch 1' $L | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') | $(grep -E 'prefill (512|2048) tokens \[default' $L | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
done; done
cat $O/final.txt; cat $O/quick.txt
