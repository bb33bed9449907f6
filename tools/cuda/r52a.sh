#!/usr/bin/env bash
# Round 52, call 1: where a 1-4-sequence decode step of llama3-8b at 1k context goes. Aggregate decode
# at 1-4 and 8 sequences (Q4_K_M, Q8_0), and ncu of one eager step of 1, 2 and 4 sequences (time per kernel).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0
echo "[${SECONDS}s] synth" >> $S
seqs default Q4_K_M 1,2,3,4,8
seqs default Q8_0 1,2,3,4,8
echo "[${SECONDS}s]" >> $S
for T in Q4_K_M Q8_0; do
  for B in 1 2 4; do
    [ $T = Q8_0 ] && [ $B != 2 ] && continue
    VELLUM_PROFILE_SEQS=$B timeout 200 /usr/local/cuda/bin/ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
      $C --profile /tmp/l8b-$T.gguf > $O/ncu-$T-$B.csv 2> $O/ncu-$T-$B.log
    echo "== ncu $T, decode $B seqs x 1k (exit $?)" >> $S
    python3 $D/ncu_kernels.py $O/ncu-$T-$B.csv 16 >> $S 2>&1
  done
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log ncu*.csv ncu*.log && rm -f ncu*.csv
cat $S
