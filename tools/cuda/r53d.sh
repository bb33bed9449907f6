#!/bin/bash
# Round 53, call 4: the decode attention at 2-16 sequences. The kernels alone at 1k x 1/2/4/8/16/32
# (--attn-bench, every variant), and llama3-8b Q4_K_M at 2-16 sequences with each variant forced.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
(synth_l8b Q4_K_M) &
timeout 200 $C --only-bench --attn-bench > $O/attn-bench.txt 2>&1
grep "paged decode attention ctx 1024" $O/attn-bench.txt | sed -E 's/ \(32q\/8kv x128, F16 KV\)//; s/ +/ /g' | cut -c1-400 >> $S
echo "[${SECONDS}s]" >> $S
wait
for r in 1 2; do
  seqs def$r Q4_K_M 2,4,8,12,16
  seqs v2_$r Q4_K_M 2,4,8,12,16 VELLUM_CUDA_ATTN_DECODE=2
  seqs v4_$r Q4_K_M 2,4,8,12,16 VELLUM_CUDA_ATTN_DECODE=4
  seqs v4s1_$r Q4_K_M 2,4,8,12,16 VELLUM_CUDA_ATTN_DECODE=4 VELLUM_CUDA_ATTN_SPB=1
done
echo "[${SECONDS}s]" >> $S
cat $S
