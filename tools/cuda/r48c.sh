#!/usr/bin/env bash
# Round 48, call 3: where the staged producer's blocks become resident. vellum_cuda_check
# --chain-trace from a -DVELLUM_CHAIN_TRACE=ON build (vcc_trace.gz) on llama3-8b Q4_K_M and Q8_0,
# main and VELLUM_CUDA_NORM_OUT_STAGED=2 (tables under $OUT, trace-TYPE-LABEL.md, and
# chain_summary.py's medians); the producer's residual now loaded beside x's copy: --norm-out-only
# and batch 1, main against staged 2, two alternating rounds.
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
  for L in main S2; do
    E=""; [ $L = S2 ] && E="VELLUM_CUDA_NORM_OUT_STAGED=2"
    env $E timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T-$L.md 2> /tmp/trace-$T-$L.log
    echo "[${SECONDS}s] trace $T $L: exit $? $(grep -c '^| [0-9]' $O/trace-$T-$L.md) launches" >> $S
    python3 $D/chain_summary.py $O/trace-$T-$L.md >> $S 2>&1
  done
done
for i in 1 2; do
  b1 main Q4_K_M
  b1 S2 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=2
  b1 main Q8_0
  b1 S2 Q8_0 VELLUM_CUDA_NORM_OUT_STAGED=2
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
