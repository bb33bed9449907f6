#!/usr/bin/env bash
# Round 42, call 3: gemv_mma's ring with up to S super-blocks in flight a warp (all of them before
# the wait where they fit): --dq-only; the kernel alone at 8 and 2 rows over warps-a-block x stages
# (VELLUM_CUDA_GEMV_MMA_SHAPE = KW * 10 + S, an experiment knob; 0 = the new default); the quick
# bench of llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "int8 mma rows" > $O/dq.txt 2>&1; grep -vE "PASS" $O/dq.txt | head -30 >> $S; echo "mma rows PASS lines: $(grep "int8 mma rows" $O/dq-check.txt | grep -c PASS)" >> $S
left dq done
for R in 8 2; do for SH in 0 82 83 42 43 44 161 162; do
  VELLUM_CUDA_GEMV_MMA_SHAPE=$SH VELLUM_BENCH_MMA_ROWS=$R VELLUM_BENCH_MMA_ONLY=1 timeout 100 $C --only-bench --gemv-only > /tmp/mb.txt 2>&1
  echo "rows $R shape $SH: $(grep 'gemv mma' /tmp/mb.txt | sed -E 's/gemv mma ([A-Z0-9_]+) ([0-9x]+) at [0-9]+ rows: ([0-9.]+) us.*rows GEMV ([0-9.]+) us.*/\1 \2 \3 (\4)/' | tr '\n' ';')" >> $S
done; done
left sweep done
wait
q default Q4_K_M; q default Q8_0
cat $O/quick.txt >> $S
left quick done
rm -f $O/quick-*.log $O/dq.txt
cat $S
