#!/usr/bin/env bash
# Round 48, call 5: the staged producer as 8 warps of 4 rows and 4 warps of 8 rows (a block small
# enough to sit beside the Q/K/V launch's blocks: call 4's trace had its first block resident only
# 1.8 µs before the attention's release); Q8_0's loads back through L1. --norm-out-only; batch 1
# main / staged 2 / 4 / 8, three alternating rounds; chain traces of staged 8.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
wait
for T in Q4_K_M Q8_0; do
  for L in S4 S8; do
    VELLUM_CUDA_NORM_OUT_STAGED=${L#S} timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T-$L.md 2> /tmp/trace-$T-$L.log
    echo "[${SECONDS}s] trace $T $L: exit $? $(grep -c '^| [0-9]' $O/trace-$T-$L.md) launches" >> $S
    python3 $D/chain_summary.py $O/trace-$T-$L.md >> $S 2>&1
  done
done
for i in 1 2 3; do
  for T in Q4_K_M Q8_0; do
    b1 main $T
    for R in 2 4 8; do b1 S$R $T VELLUM_CUDA_NORM_OUT_STAGED=$R; done
  done
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
