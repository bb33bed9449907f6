#!/bin/bash
# Round 53, call 7 (the final binary): --graphs on llama3.2-1b Q4_K_M and Q8_0 (graphs vs eager, the
# layer kernel vs its ops, and round 53's rows fused vs unfused with the attention's int8 rows copies,
# 1 / 2 / 4 / 12 / 20 / 40 rows), the deterministic mode's proofs on Q4_K_M, and the quick bench of
# llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
(synth_l8b Q4_K_M Q8_0) &
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/g-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/g-$T.gguf > $O/graphs-$T.txt 2>&1
  echo "[${SECONDS}s] --graphs llama3.2-1b $T (exit $?): $(tail -1 $O/graphs-$T.txt)" >> $S
  grep -E "rows fused vs|graphs vs|kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E 's/ +/ /g' | cut -c1-260 >> $S
done
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
