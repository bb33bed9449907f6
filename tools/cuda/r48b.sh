#!/usr/bin/env bash
# Round 48, call 2: the staged producer with x copied into shared memory once a block after the wait
# (call 1's version read x from L2 pass by pass, one round trip a pass). --norm-out-only, then
# llama3-8b Q4_K_M and Q8_0 batch 1: main, staged 1 row a warp, staged 2 rows, three alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
wait
for i in 1 2 3; do
  b1 main Q4_K_M
  b1 S1 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=1
  b1 S2 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=2
  b1 main Q8_0
  b1 S1 Q8_0 VELLUM_CUDA_NORM_OUT_STAGED=1
  b1 S2 Q8_0 VELLUM_CUDA_NORM_OUT_STAGED=2
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
