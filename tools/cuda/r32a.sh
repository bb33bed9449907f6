#!/usr/bin/env bash
# The knob VELLUM_CUDA_RESIDENT_CAP and its code are on branch r32-resident; vcc_lean is branch
# r31-lean-copier's build (both measured, not kept: docs/cuda.md, round 32).
# Round 32, call 1: (1) --attn-only on main (the 28q/4kv x128 check's first run) and on branch
# r31-lean-copier; (2) the prefill attention at 32 768 tokens; (3) branch r32-resident's
# VELLUM_CUDA_RESIDENT_CAP (Q8_0 Q/K/V capped at 112 registers, the one-row attention at 88, so
# that the attention's blocks fit beside Q/K/V's): batch 1 alternating, then the chain traced;
# (4) r31-lean-copier's prefill attention against main's, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_res vcc_res_trace vcc_lean; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
for X in vellum_cuda_check vcc_lean; do
  timeout 200 $D/$X --attn-only > /tmp/attn-$X.txt 2>&1
  echo "attn checks $X (exit $?): $(tail -1 /tmp/attn-$X.txt)" >> $S
  grep -E "FAIL" /tmp/attn-$X.txt | head -3 | cut -c1-160 >> $S
  grep -E "28q/4kv|28 q" /tmp/attn-$X.txt | head -4 | cut -c1-200 >> $S
done
wait
for i in 1 2; do
  for P in 0 1; do C=$D/vcc_res; b1 cap$P Q8_0 VELLUM_CUDA_RESIDENT_CAP=$P; done
done
for P in 0 1; do C=$D/vcc_res; b1 cap$P Q4_K_M VELLUM_CUDA_RESIDENT_CAP=$P; done
cat $O/b1.txt >> $S
for P in 0 1; do
  VELLUM_CUDA_RESIDENT_CAP=$P timeout 200 $D/vcc_res_trace --chain-trace /tmp/l8b-Q8_0.gguf > $O/trace-Q8_0-cap$P.md 2> /tmp/trace-cap$P.log
  echo "trace Q8_0 cap$P: exit $?" >> $S
done
C=$D/vellum_cuda_check
VELLUM_PREFILL_ATTN_T=32768 timeout 200 $C --prefill-attn-only > /tmp/pa32k.txt 2>&1
echo "32k (exit $?): $(grep 'prefill attention' /tmp/pa32k.txt | cut -c1-260)" >> $S
for i in 1 2; do
  attn_prefill main-$i $D/vellum_cuda_check >> $S
  attn_prefill lean-$i $D/vcc_lean >> $S
done
cat $S
