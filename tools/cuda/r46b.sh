#!/usr/bin/env bash
# Round 46, call 2: Q/K/V and the one-row attention in one launch of a cluster a KV group
# (qkv_attn_row.h): --qkv-attn-only (bit for bit against the two launches), --graphs on
# llama3.2-1b Q4_K_M and Q8_0 (logits of the fused launch vs two, graphs vs eager), stories260K
# greedy, and llama3-8b batch 1 with it on (default) and off (VELLUM_CUDA_QKV_ATTN=0), alternating.
# Since call 1: the weights through a cp.async ring in shared memory (7 / 5 / 2 items in flight a
# warp), blocks leave as soon as nothing of theirs is read.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
timeout 150 $C --qkv-attn-only > $O/qa.txt 2>&1; echo "qkv attn checks (exit $?): $(tail -1 $O/qa.txt)" >> $S
grep -E "FAIL" $O/qa.txt | cut -c1-220 | head -12 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "one launch|graphs vs|kernel vs|row norm vs|FAIL" $O/graphs-$T.txt | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
TS=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $TS/s.gguf > /dev/null
python3 $D/stories_greedy.py $V $TS/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1 >> $S
left checks done
wait
for i in 1 2 3; do
  b1 on Q4_K_M; b1 off Q4_K_M VELLUM_CUDA_QKV_ATTN=0
  b1 on Q8_0; b1 off Q8_0 VELLUM_CUDA_QKV_ATTN=0
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
