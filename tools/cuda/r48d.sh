#!/usr/bin/env bash
# Round 48, call 4: the staged producer padded to one block an SM, and Q8_0's int8 weight loads
# without L1 allocation (I8Q8_0::load, every Q8_0 int8 kernel). vcc_old.gz is call 3's binary
# (neither change). --norm-out-only; chain traces of the new binary (vcc_trace.gz), main and staged 2;
# batch 1: old main, new main, new staged 1 and 2, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_old vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
wait
for T in Q4_K_M Q8_0; do
  for L in main S2; do
    E=""; [ $L = S2 ] && E="VELLUM_CUDA_NORM_OUT_STAGED=2"
    env $E timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T-$L.md 2> /tmp/trace-$T-$L.log
    echo "[${SECONDS}s] trace $T $L: exit $? $(grep -c '^| [0-9]' $O/trace-$T-$L.md) launches" >> $S
    python3 $D/chain_summary.py $O/trace-$T-$L.md >> $S 2>&1
  done
done
C_NEW=$C
for i in 1 2 3; do
  for T in Q4_K_M Q8_0; do
    C=$D/vcc_old; b1 old $T
    C=$C_NEW; b1 new $T
    b1 S1 $T VELLUM_CUDA_NORM_OUT_STAGED=1
    b1 S2 $T VELLUM_CUDA_NORM_OUT_STAGED=2
  done
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
