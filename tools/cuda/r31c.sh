#!/usr/bin/env bash
# Round 31, call 3: call 2 again after the fix (the copying warpgroup took its KV head from a head
# past the block's: warp / 4 = 2), with three stages the copying warpgroup's default. --attn-only
# each way, CPU vs GPU greedy on qwen3-0.6b with 200-token prompts, the kernel's timings (round 27's
# kernel with 2 stages against the new one with 3 and 2, alternating), prefill in the model.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz; chmod +x $D/vellum $D/vellum_cuda_check
source $D/final_common.sh
S=$O/summary.txt
(for T in BF16 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
for W in "VELLUM_CUDA_ATTN_WG_WS=1" "VELLUM_CUDA_ATTN_WG_WS=1 VELLUM_CUDA_ATTN_WG_STAGES=2" "VELLUM_CUDA_ATTN_WG_WS=0"; do
  env $W timeout 200 $C --attn-only > /tmp/attn.txt 2>&1
  echo "attn checks $W (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
  grep FAIL /tmp/attn.txt | head -3 | cut -c1-120 >> $S
done
$V gguf synth --preset qwen3-0.6b --type F16 -o /tmp/q3.gguf > /dev/null 2>&1
VELLUM_COMPARE_PROMPT=200 timeout 200 $C --compare /tmp/q3.gguf 2>/tmp/cmp.log | grep -E "greedy|diverge" | cut -c1-200 | sed "s/^/qwen3-0.6b 200-token prompts: /" >> $S
timeout 150 $C --graphs /tmp/q3.gguf 2>&1 | grep -E "graphs vs" | cut -c1-200 | sed "s/^/qwen3-0.6b: /" >> $S
for i in 1 2; do
  attn_prefill old-$i $C VELLUM_CUDA_ATTN_WG_WS=0 >> $S
  attn_prefill ws-s3-$i $C >> $S
  attn_prefill ws-s2-$i $C VELLUM_CUDA_ATTN_WG_STAGES=2 >> $S
done
grep -h "prefill attention" /tmp/pa-ws-s3-1.txt | cut -c1-250 >> $S
wait
for i in 1 2; do
  for W in 0 1; do
    export VELLUM_CUDA_ATTN_WG_WS=$W
    for T in BF16 Q4_K_M; do model_prefill ws$W-$i $C $T >> $S; done
  done
done
cat $S
