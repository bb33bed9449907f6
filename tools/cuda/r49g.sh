#!/usr/bin/env bash
# Round 49, call 7: the final binary. --attn-only (the one-row kernels against f64, V placed by
# occupancy), model_checks (stories260K greedy against run.c's reference, graphs vs eager, CPU vs GPU
# greedy on qwen2.5-0.5b, --graphs on llama3.2-1b Q4_K_M), --norm-out-only, then llama3-8b Q4_K_M /
# Q8_0 batch 1 after 16 and 600 tokens.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
timeout 120 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks done" >> $S
wait
for T in Q4_K_M Q8_0; do
  for c in 16 600; do
    [ $SECONDS -lt 520 ] || break 2
    b1 ctx$c $T VELLUM_BENCH_B1_CTX=$c
  done
done
echo "[${SECONDS}s] b1 done" >> $S
tar czf $O/logs.tgz -C $O attn.txt normout.txt && rm -f $O/attn.txt $O/normout.txt
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
