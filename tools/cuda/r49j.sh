#!/usr/bin/env bash
# Round 49, call 10: the long kernel with RoPE, second version (raw rows staged in one round trip,
# q and k rotated once in shared memory by the block; call 9's version lost 8–10%). --attn-only
# (bit for bit against rope_store_kv + the long kernel), then llama3-8b Q4_K_M batch 1 after 2 048
# and 4 096 tokens, on against VELLUM_CUDA_LONG_ROPE=0, two rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
wait
for i in 1 2; do
  for c in 2048 4096; do
    [ $SECONDS -lt 300 ] || break 2
    b1 ctx$c-on Q4_K_M VELLUM_BENCH_B1_CTX=$c
    b1 ctx$c-off Q4_K_M VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_LONG_ROPE=0
  done
done
echo "[${SECONDS}s] b1 done" >> $S
rm -f $O/attn.txt
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
