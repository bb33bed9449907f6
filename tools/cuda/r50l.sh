#!/usr/bin/env bash
# Round 50, call 12, the final binary (cluster merge where it fits, 4 tiles a run by default):
# --attn-only, model_checks (stories260K greedy, graphs vs eager, CPU vs GPU greedy, llama3.2-1b
# Q4_K_M graphs and layer kernel), batch 1: llama3-8b Q4_K_M after 16 / 1 800 tokens, qwen2.5-0.5b
# Q4_K_M after 4 096.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
($V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf; $V gguf synth --preset qwen2.5-0.5b --type Q4_K_M -o /tmp/l8b-q05.gguf) > /dev/null 2>&1 &
timeout 250 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
echo "long kernel 6 vs 4: $(grep -c 'long kernel 6 vs 4.*PASS' $O/attn.txt) pass, $(grep 'long kernel 6 vs 4' $O/attn.txt | grep -vc '0 cluster launch') with a cluster launch" >> $S
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks done" >> $S
wait
b1 ctx16 Q4_K_M
b1 ctx1800 Q4_K_M VELLUM_BENCH_B1_CTX=1800
b1 ctx4096 q05 VELLUM_BENCH_B1_CTX=4096
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz attn.txt && rm -f attn.txt
cat $S
