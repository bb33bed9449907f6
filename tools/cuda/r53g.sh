#!/bin/bash
# Round 53, call 7 (the final binary): --graphs on llama3.2-1b Q4_K_M and Q8_0 (graphs vs eager, the
# layer kernel vs its ops, and round 53's rows fused vs unfused with the attention's int8 rows copies,
# 1 / 2 / 4 / 12 / 20 / 40 rows), the deterministic mode's proofs on Q4_K_M, and the quick bench of
# llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
(synth_l8b Q4_K_M Q8_0) &
for T in Q4_K_M Q8_0; do graphs_1b $T; done
det_proofs Q4_K_M >> $S 2>&1
echo "[${SECONDS}s] det proofs" >> $S
wait
for T in Q4_K_M Q8_0; do
  q final $T VELLUM_BENCH_SEQS=1,2,4,8,12,16,32,64,128,256
done
cat $O/quick.txt >> $S
grep -hE "device copy|GEMM 8192" $O/quick-*-final.log | sort -u >> $S
echo "[${SECONDS}s]" >> $S
cat $S
