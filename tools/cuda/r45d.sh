#!/usr/bin/env bash
# Round 45, call 4: what the one-row Q4_K/Q6_K launches' loads before the programmatic wait are
# worth: VELLUM_CUDA_PRELOAD_OFF (1 the norm-out producers, 2 the SwiGLU, 4 Q/K/V) moves them after
# the wait. --graphs on llama3.2-1b Q4_K_M with all three (the same bits), then llama3-8b Q4_K_M
# batch 1 alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
($V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1) &
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1
VELLUM_CUDA_PRELOAD_OFF=7 timeout 150 $C --graphs /tmp/p-Q4_K_M.gguf > $O/graphs-off7.txt 2>&1
grep -E "graphs vs|row norm vs|FAIL" $O/graphs-off7.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/off7 /" | cut -c1-230 >> $S
left checks done
wait
for i in 1 2; do
  for M in 0 1 2 4 7; do b1 off$M Q4_K_M VELLUM_CUDA_PRELOAD_OFF=$M; done
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
