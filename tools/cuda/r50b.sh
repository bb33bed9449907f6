#!/usr/bin/env bash
# Round 50, call 2: the cluster merge with as many runs as the device holds clusters of for every
# KV head group (call 1: an H200 holds 7 clusters of 16, llama3-8b needs 8): --attn-clusters,
# --attn-only (6 vs 4 and 7 vs 3 at the same runs, bit for bit), --graphs with 6, and llama3-8b
# Q4_K_M batch 1 after 1 100 / 2 048 / 4 096 / 7 600 tokens: 4, 6, and 4 at 6's runs.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 30 $C --attn-clusters 2>&1 | grep -E "long kernel" >> $S
timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
grep -E "cluster merge" $O/attn.txt | sed -E 's/ +/ /g' | sed -E 's/.*one-row step at //' | cut -c1-200 | head -40 >> $S
C8=$(grep -E "32q/8kv x128 one-row step at 3000, long kernel 6" $O/attn.txt | head -1 | sed -E 's/.* of ([0-9]+) runs.*/\1/')
echo "variant 6's runs on llama3-8b's shape: $C8" >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_ATTN_LONG=6 timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M, long kernel 6 (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
for N in 2048 4096 7600 1100; do
  for r in 1 2; do
    b1 ctx$N-v4 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=4
    b1 ctx$N-v6 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=6
    b1 ctx$N-v4-runs$C8 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=4 VELLUM_CUDA_ATTN_LONG_RUNS=$C8
  done
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz attn.txt graphs.txt && rm -f attn.txt graphs.txt
cat $S
