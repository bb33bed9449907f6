#!/usr/bin/env bash
# Round 27, call 10: FlashAttention-3's intra-warpgroup overlap (VELLUM_CUDA_ATTN_WG_OVERLAP=1: tile j's S
# beside tile j - 1's P·V, 3 stages, two P buffers by turns): checks (--attn-only at 128 and 64 positions,
# qwen3-0.6b CPU vs GPU greedy with 200-token prompts, graphs vs eager), timings against the plain
# loop, and llama3-8b prefill with each.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
 $V gguf synth --preset qwen3-0.6b --type F16 -o /tmp/q3.gguf > /dev/null 2>&1) &
export VELLUM_CUDA_ATTN_WG_OVERLAP=1
for KV in 128 64; do
  VELLUM_CUDA_ATTN_WG_KV=$KV timeout 200 $C --attn-only > $O/attn-$KV.txt 2>&1
  echo "attn checks overlap kv=$KV (exit $?): $(tail -1 $O/attn-$KV.txt)" >> $S
  grep FAIL $O/attn-$KV.txt | head -3 | cut -c1-120 >> $S
done
for OV in 0 1; do
  VELLUM_CUDA_ATTN_WG_OVERLAP=$OV timeout 200 $C --prefill-attn-only > $O/pa-$OV.txt 2>&1
  grep "prefill attention" $O/pa-$OV.txt | sort -u | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores.*, mma.sync/overlap$OV \2 \1: mma.sync/" >> $S
done
wait
VELLUM_COMPARE_PROMPT=200 timeout 200 $C --compare /tmp/q3.gguf 2>/tmp/cmp.log | grep -E "diverge" | cut -c1-200 >> $S
grep -E "greedy cpu vs gpu:" /tmp/cmp.log | sed "s/^/qwen3-0.6b prompt 200, overlap: /" >> $S
timeout 150 $C --graphs /tmp/q3.gguf 2>&1 | grep -E "graphs vs" | tail -1 | cut -c1-200 | sed "s/^/qwen3-0.6b overlap: /" >> $S
for OV in 0 1; do for T in BF16 Q4_K_M; do
  VELLUM_CUDA_ATTN_WG_OVERLAP=$OV model_prefill ov$OV $C $T >> $S
done; done
cat $S
