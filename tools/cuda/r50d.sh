#!/usr/bin/env bash
# Round 50, call 4: long kernel 8 (4 warps, 2 stages, 64 KB: two blocks an SM, so 16-run clusters
# fit every KV head group), against 4 and against 1 at 16 runs (8's blocks, merged through global
# memory): --attn-only (8 vs 1 bit for bit), llama3-8b Q4_K_M batch 1 after 16 / 2 048 / 4 096 / 7 600.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
grep -E "long kernel 8 \(cluster merge\)" $O/attn.txt | sed -E 's/ +/ /g' | sed -E 's/.*one-row step at //' | cut -c1-200 | head -40 >> $S
wait
b1 ctx16 Q4_K_M
for N in 2048 4096 7600; do
  for r in 1 2; do
    b1 ctx$N-v4 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=4
    b1 ctx$N-v8 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=8
    b1 ctx$N-v1-runs16 Q4_K_M VELLUM_BENCH_B1_CTX=$N VELLUM_CUDA_ATTN_LONG=1 VELLUM_CUDA_ATTN_LONG_RUNS=16
  done
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz attn.txt && rm -f attn.txt
cat $S
