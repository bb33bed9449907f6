#!/usr/bin/env bash
# Round 51, call 7, the final binary (the rows kernel from 3 rows): 2-4 sequences; --graphs on
# llama3.2-1b Q4_K_M; the decode attention's variant 2 and one chunk a block against the default at
# 24-128 sequences, alternating (llama3-8b Q4_K_M at 1k).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M &
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 200 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|kernel vs|FAIL" | awk '!s[$0]++' | sed -E 's/ +/ /g' | cut -c1-220 >> $S
wait
echo "[${SECONDS}s] synth, graphs" >> $S
seqs default Q4_K_M 2,3,4
for r in 1 2; do
  seqs attn-default-$r Q4_K_M 24,32,48,64,128
  seqs attn-v2-$r Q4_K_M 24,32,48,64,128 VELLUM_CUDA_ATTN_DECODE=2
  seqs attn-spb1-$r Q4_K_M 24,32,48,64,128 VELLUM_CUDA_ATTN_SPB=1
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz seqs-*.log && rm -f seqs-*.log
cat $S
