#!/usr/bin/env bash
# Round 50, call 10: the Q4_K / Q6_K down projection (register producer) copies x's int8 copy into
# shared memory once and reads it from there (VELLUM_CUDA_NORM_OUT_X_SMEM=1): --norm-out-only and
# --graphs with it, llama3-8b Q4_K_M batch 1 after 16 / 4 096 tokens against it off, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
VELLUM_CUDA_NORM_OUT_X_SMEM=1 timeout 100 $C --norm-out-only > $O/no.txt 2>&1; echo "[${SECONDS}s] --norm-out-only, x in shared memory (exit $?): $(tail -1 $O/no.txt)" >> $S
grep -E "FAIL" $O/no.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_NORM_OUT_X_SMEM=1 timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M, x in shared memory (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
for r in 1 2 3; do
  b1 ctx16-off Q4_K_M
  b1 ctx16-xsmem Q4_K_M VELLUM_CUDA_NORM_OUT_X_SMEM=1
done
b1 ctx4096-off Q4_K_M VELLUM_BENCH_B1_CTX=4096
b1 ctx4096-xsmem Q4_K_M VELLUM_BENCH_B1_CTX=4096 VELLUM_CUDA_NORM_OUT_X_SMEM=1
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz no.txt graphs.txt && rm -f no.txt graphs.txt
cat $S
