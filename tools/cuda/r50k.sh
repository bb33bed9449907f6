#!/usr/bin/env bash
# Round 50, call 11: the long kernel's runs at 4 tiles at least instead of 8 (VELLUM_CUDA_ATTN_LONG_TILES=4),
# so that 1 025-2 047 positions fill 16 runs (llama3-8b: 128 blocks) instead of 8-15: --attn-only and
# --graphs on llama3.2-1b Q4_K_M with it, and batch 1 after 1 100 / 1 500 / 1 800 tokens (llama3-8b and
# qwen2.5-0.5b Q4_K_M), 8 against 4, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
($V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf; $V gguf synth --preset qwen2.5-0.5b --type Q4_K_M -o /tmp/l8b-q05.gguf) > /dev/null 2>&1 &
VELLUM_CUDA_ATTN_LONG_TILES=4 timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks, 4 tiles a run (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_ATTN_LONG_TILES=4 timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M, 4 tiles a run (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
for N in 1100 1500 1800; do
  for r in 1 2; do
    b1 ctx$N-t8 Q4_K_M VELLUM_BENCH_B1_CTX=$N
    b1 ctx$N-t4 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG_TILES=4
  done
done
for r in 1 2; do
  b1 ctx1100-t8 q05 VELLUM_BENCH_B1_CTX=1100
  b1 ctx1100-t4 q05 VELLUM_BENCH_B1_CTX=1100 VELLUM_CUDA_ATTN_LONG_TILES=4
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz attn.txt graphs.txt && rm -f attn.txt graphs.txt
cat $S
