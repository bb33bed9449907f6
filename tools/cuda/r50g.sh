#!/usr/bin/env bash
# Round 50, call 7: variant 6 (the cluster merge where every group's cluster fits, else 4) as the
# default: --attn-clusters, --attn-only (6 vs 4 bit for bit), model_checks (stories260K greedy,
# graphs vs eager on stories260K, qwen2.5-0.5b F16 (2 KV heads: the cluster path in its 1 100+ phase)
# and llama3.2-1b Q4_K_M, CPU vs GPU greedy), and batch 1: llama3-8b Q4_K_M after 16 / 4 096 tokens,
# qwen2.5-0.5b and llama3.2-1b Q4_K_M after 4 096, the default against 4.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 30 $C --attn-clusters 2>&1 | grep -E "long kernel" >> $S
timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
grep -E "long kernel 6 vs 4" $O/attn.txt | sed -E 's/ +/ /g' | sed -E 's/^attention //' | cut -c1-170 | head -40 >> $S
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks done" >> $S
wait
$V gguf synth --preset qwen2.5-0.5b --type Q4_K_M -o /tmp/l8b-q05.gguf > /dev/null 2>&1
ln -sf /tmp/p4.gguf /tmp/l8b-p4.gguf
b1 ctx16 Q4_K_M
for r in 1 2; do
  b1 ctx4096-default Q4_K_M VELLUM_BENCH_B1_CTX=4096
  b1 ctx4096-v4 Q4_K_M VELLUM_BENCH_B1_CTX=4096 VELLUM_CUDA_ATTN_LONG=4
  b1 ctx4096-default q05 VELLUM_BENCH_B1_CTX=4096
  b1 ctx4096-v4 q05 VELLUM_BENCH_B1_CTX=4096 VELLUM_CUDA_ATTN_LONG=4
  b1 ctx4096-default p4 VELLUM_BENCH_B1_CTX=4096
  b1 ctx4096-v4 p4 VELLUM_BENCH_B1_CTX=4096 VELLUM_CUDA_ATTN_LONG=4
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz attn.txt && rm -f attn.txt
cat $S
