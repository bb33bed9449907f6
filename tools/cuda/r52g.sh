#!/usr/bin/env bash
# Round 52, call 7: call 6's quick bench put 1 sequence at 500 tok/s (round 51: 524); the same bench
# twice more, alternating with VELLUM_BENCH_SEQS=1 (the seqs lines of calls 1-4: 533-545).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
[ -f /tmp/l8b-Q4_K_M.gguf ] || synth_l8b Q4_K_M
echo "[${SECONDS}s] model" >> $S
for r in 1 2; do
  q again$r Q4_K_M
  seqs one$r Q4_K_M 1,2
done
cat $O/quick.txt >> $S
echo "[${SECONDS}s]" >> $S
cat $S
