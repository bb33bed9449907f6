#!/usr/bin/env bash
# Round 34, call 4 (final): call 3's binary with x's tile prefetched into L2 for the residual store
# and rope_kv_rows' loads batched. Prefill 512 / 1 024 with the round's paths on and off (knobs),
# alternating; the checks of everything the round changed (--layer-only, --attn-only, --embed-only,
# --dq-only, model_checks); the quick bench of Q4_K_M (batch 1, decode 1..256 sequences, prefill).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
for r in 1 2; do
  for T in Q4_K_M Q8_0; do
    VELLUM_BENCH_PREFILL=512,1024 model_prefill new$r $C $T >> $S
    VELLUM_BENCH_PREFILL=512,1024 VELLUM_CUDA_ROPE_ROWS=0 VELLUM_CUDA_RESIDUAL_ROWS=0 model_prefill off$r $C $T >> $S
  done
done
timeout 150 $C --layer-only > $O/layer.txt 2>&1; echo "layer checks (exit $?): $(tail -1 $O/layer.txt)" >> $S
grep -E "FAIL" $O/layer.txt | cut -c1-160 >> $S
timeout 150 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | cut -c1-160 | head >> $S
timeout 60 $C --embed-only > $O/embed.txt 2>&1; echo "embed checks (exit $?): $(tail -1 $O/embed.txt)" >> $S
grep -E "FAIL" $O/embed.txt | cut -c1-160 | head >> $S
dq_checks >> $S
model_checks >> $S 2>&1
q new Q4_K_M
cat $O/quick.txt >> $S
cat $S
