#!/usr/bin/env bash
# Round 31, call 5: the committed code (the copying-warpgroup attention kernel, 3 stages, head pairs
# dispatched fastest up to 64 query tiles). --attn-only (default, without turns, tiles fastest),
# --det-only, every op against the CPU, stories260K greedy, graphs vs eager, CPU vs GPU greedy,
# batch invariance (final_checks), CPU vs GPU greedy with 200-token prompts on qwen3-0.6b; the
# kernel's timings against its variants and round 27's kernel, alternating; prefill in the model.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz; chmod +x $D/vellum $D/vellum_cuda_check
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for W in "" "VELLUM_CUDA_ATTN_WG_PP=0" "VELLUM_CUDA_ATTN_WG_ORDER=0"; do
  env $W timeout 200 $C --attn-only > /tmp/attn.txt 2>&1
  echo "attn checks ${W:-default} (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
  grep FAIL /tmp/attn.txt | head -3 | cut -c1-120 >> $S
done
timeout 200 $C --det-only > /tmp/det-check.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 /tmp/det-check.txt)" >> $S
export SYNTH_TYPES="BF16 Q4_K_M"
final_checks
cat $O/final.txt >> $S
$V gguf synth --preset qwen3-0.6b --type F16 -o /tmp/q3.gguf > /dev/null 2>&1
VELLUM_COMPARE_PROMPT=200 timeout 200 $C --compare /tmp/q3.gguf 2>/tmp/cmp.log | grep -E "greedy|diverge" | cut -c1-200 | sed "s/^/qwen3-0.6b 200-token prompts: /" >> $S
for i in 1 2; do
  attn_prefill default-$i $C >> $S
  attn_prefill pp0-$i $C VELLUM_CUDA_ATTN_WG_PP=0 >> $S
  attn_prefill order0-$i $C VELLUM_CUDA_ATTN_WG_ORDER=0 >> $S
  attn_prefill r27-$i $C VELLUM_CUDA_ATTN_WG_WS=0 VELLUM_CUDA_ATTN_WG_ORDER=0 >> $S
done
for T in BF16 Q4_K_M; do model_prefill final $C $T >> $S; done
export VELLUM_CUDA_ATTN_WG_WS=0 VELLUM_CUDA_ATTN_WG_ORDER=0
for T in BF16 Q4_K_M; do model_prefill r27 $C $T >> $S; done
cat $S
