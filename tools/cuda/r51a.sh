#!/usr/bin/env bash
# Round 51, call 1: round 50's host-only review commit on the GPU (--attn-clusters, --attn-only);
# llama3-8b Q4_K_M aggregate decode at 1k from 8 to 64 sequences (the 9-64-row matmul paths: mmq
# 9-16, dq_mma 17-32, dq_tma 33+), with mmq or dq_tma taking more rows; ncu of one eager 32-sequence
# step, time per kernel.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M &
timeout 60 $C --attn-clusters > $O/clusters.txt 2>&1; echo "[${SECONDS}s] --attn-clusters (exit $?)" >> $S
timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
echo "long kernel 6 vs 4: $(checks $O/attn.txt 'long kernel 6 vs 4') pass, $(checks $O/attn.txt 'long kernel 6 vs 4' '0 cluster launch') with a cluster launch" >> $S
wait
seqs default Q4_K_M 8,12,16,24,32,48,64
seqs mmq32 Q4_K_M 8,12,16,24,32,48,64 VELLUM_CUDA_DQ_AUTO_MIN=1000
seqs tma9 Q4_K_M 8,12,16,24,32,48,64 VELLUM_CUDA_DQ_AUTO_MIN=1000 VELLUM_CUDA_DQ_TMA_MIN=9
echo "[${SECONDS}s]" >> $S
for B in 32 16; do
  VELLUM_PROFILE_SEQS=$B timeout 200 /usr/local/cuda/bin/ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
    $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu$B.csv 2> $O/ncu$B.log
  echo "== ncu, decode $B seqs x 1k (exit $?)" >> $S
  python3 $D/ncu_kernels.py $O/ncu$B.csv 12 >> $S 2>&1
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz attn.txt clusters.txt seqs-*.log ncu*.csv && rm -f attn.txt ncu*.csv
cat $S
