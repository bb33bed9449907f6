#!/usr/bin/env bash
# Round 31, call 2: the tensor-core prefill attention with a copying warpgroup and mbarriers
# (VELLUM_CUDA_ATTN_WG_WS=1, the new default) against round 27's block barrier a tile (=0):
# --attn-only checks each way, CPU vs GPU greedy on qwen3-0.6b with 200-token prompts (the wgmma
# kernel over two K/V steps), the kernel's timings (2 and 3 stages, alternating), then prefill in
# the model (llama3-8b BF16 and Q4_K_M, quick bench).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz; chmod +x $D/vellum $D/vellum_cuda_check
source $D/final_common.sh
S=$O/summary.txt
(for T in BF16 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
for W in 1 0; do
  VELLUM_CUDA_ATTN_WG_WS=$W timeout 200 $C --attn-only > /tmp/attn-$W.txt 2>&1
  echo "attn checks ws=$W (exit $?): $(tail -1 /tmp/attn-$W.txt)" >> $S
  grep FAIL /tmp/attn-$W.txt | head -3 | cut -c1-120 >> $S
done
VELLUM_CUDA_ATTN_WG_STAGES=3 timeout 200 $C --attn-only > /tmp/attn-s3.txt 2>&1
echo "attn checks ws=1 stages=3 (exit $?): $(tail -1 /tmp/attn-s3.txt)" >> $S
$V gguf synth --preset qwen3-0.6b --type F16 -o /tmp/q3.gguf > /dev/null 2>&1
VELLUM_COMPARE_PROMPT=200 timeout 200 $C --compare /tmp/q3.gguf 2>/tmp/cmp.log | grep -E "greedy|diverge" | cut -c1-200 | sed "s/^/qwen3-0.6b 200-token prompts: /" >> $S
for i in 1 2; do
  for W in 0 1; do
    attn_prefill ws$W-s2-$i $C VELLUM_CUDA_ATTN_WG_WS=$W >> $S
    attn_prefill ws$W-s3-$i $C VELLUM_CUDA_ATTN_WG_WS=$W VELLUM_CUDA_ATTN_WG_STAGES=3 >> $S
  done
done
wait
for i in 1 2; do
  for W in 0 1; do
    export VELLUM_CUDA_ATTN_WG_WS=$W
    for T in BF16 Q4_K_M; do model_prefill ws$W-$i $C $T >> $S; done
  done
done
cat $S
