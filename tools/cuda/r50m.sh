#!/usr/bin/env bash
# Round 50, call 13: e58281c (the cluster launch's fallback when its attributes are refused):
# --attn-only, graphs vs eager on qwen2.5-0.5b F16 (its 1 100+ steps on the cluster merge).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1 &
timeout 100 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
echo "long kernel 6 vs 4: $(grep -c 'long kernel 6 vs 4.*PASS' $O/attn.txt) pass, $(grep 'long kernel 6 vs 4' $O/attn.txt | grep -vc '0 cluster launch') with a cluster launch" >> $S
wait
timeout 60 $C --graphs /tmp/q.gguf 2>&1 | grep -E "graphs vs|checks," | sed -E 's/ +/ /g' | cut -c1-200 >> $S
echo "[${SECONDS}s]" >> $S
rm -f $O/attn.txt
cat $S
