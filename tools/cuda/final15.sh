#!/usr/bin/env bash
# Round 15 final call: the committed binary's checks (run5.sh checks: every op vs the CPU incl. the
# register-A dq_mma kernel, stories260K greedy, graphs vs eager, CPU vs GPU greedy), then llama3-8b
# Q4_K_M and Q8_0 quick benches alternating with round 14's binary (check.r14.xz, xz of it, beside
# this script), and the new binary with dq_mma from 17 rows.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
xz -dc $D/check.r14.xz > /tmp/check.r14 && chmod +x /tmp/check.r14
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; } > $O/final.txt
wait
q() {  # label, binary, type, then env assignments
  local label=$1 bin=$2 T=$3; shift 3
  L=$O/quick-$T-$label.log
  env "$@" VELLUM_BENCH_QUICK=1 timeout 200 $bin --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf 2>$L >/dev/null
  echo "$T $label: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens \[default' $L | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
}
for T in Q4_K_M Q8_0; do
  for B in r14 new r14 new; do
    X=$C; [ $B = r14 ] && X=/tmp/check.r14
    q $B $X $T X=1
  done
  q new-from17 $C $T VELLUM_CUDA_DQ_AUTO_MIN=17
done
cat $O/final.txt $O/quick.txt
