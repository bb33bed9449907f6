#!/usr/bin/env bash
# Round 50, call 1: the long kernel's runs merged in a cluster (VELLUM_CUDA_ATTN_LONG=6 / 7, the
# same bits as 4 / 3): --attn-clusters, --attn-only (6 vs 4 and 7 vs 3 bit for bit), --graphs on
# llama3.2-1b Q4_K_M with 6, and llama3-8b Q4_K_M batch 1 after 1 100 / 2 048 / 4 096 / 7 600 tokens.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 30 $C --attn-clusters 2>&1 | grep -E "one-row|long kernel" >> $S
timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
grep -E "cluster merge" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-220 | head -40 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_ATTN_LONG=6 timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M, long kernel 6 (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
for N in 2048 4096; do
  for v in 4 6 7 4 6; do b1 ctx$N-v$v Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=$v; done
done
for N in 1100 7600; do
  for v in 4 6 7; do b1 ctx$N-v$v Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=$v; done
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz attn.txt graphs.txt && rm -f attn.txt graphs.txt
cat $S
