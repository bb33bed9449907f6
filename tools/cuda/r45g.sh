#!/usr/bin/env bash
# Round 45, call 7: a short row's one-row attention as one slice: decode graphs padded to 128
# positions instead of 256 (VELLUM_CUDA_ONE_ROW_MIN_POSITIONS=128), and that slice launched without
# the cluster attribute (VELLUM_CUDA_ROPE_ATTN_CLUSTER1=0). --attn-only and --graphs on llama3.2-1b
# Q4_K_M with both, then llama3-8b batch 1 (16-210 positions) alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
VELLUM_CUDA_ONE_ROW_MIN_POSITIONS=128 VELLUM_CUDA_ROPE_ATTN_CLUSTER1=0 timeout 150 $C --attn-only > $O/attn.txt 2>&1
echo "attention checks, one slice without a cluster (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep FAIL $O/attn.txt | cut -c1-200 | head -5 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1
VELLUM_CUDA_ONE_ROW_MIN_POSITIONS=128 VELLUM_CUDA_ROPE_ATTN_CLUSTER1=0 timeout 150 $C --graphs /tmp/p-Q4_K_M.gguf > $O/graphs.txt 2>&1
grep -E "graphs vs|row norm vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-230 >> $S
echo "[${SECONDS}s] checks done" >> $S
wait
for i in 1 2; do
  b1 default Q4_K_M; b1 min128 Q4_K_M VELLUM_CUDA_ONE_ROW_MIN_POSITIONS=128
  b1 min128-nocluster Q4_K_M VELLUM_CUDA_ONE_ROW_MIN_POSITIONS=128 VELLUM_CUDA_ROPE_ATTN_CLUSTER1=0
  b1 default Q8_0; b1 min128-nocluster Q8_0 VELLUM_CUDA_ONE_ROW_MIN_POSITIONS=128 VELLUM_CUDA_ROPE_ATTN_CLUSTER1=0
done
cut -d'|' -f1 $O/b1.txt >> $S
echo "[${SECONDS}s] b1 done" >> $S
cat $S
