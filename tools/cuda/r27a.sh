#!/usr/bin/env bash
# Round 27, call 1: the wgmma prefill attention (attn_wgmma.cu). --attn-only with V's descriptor
# fields as written and swapped (VELLUM_CUDA_ATTN_WG_VSWAP), the prefill attention timings
# (mma.sync, wgmma/64, wgmma/128), and llama3-8b prefill with the kernel off / on, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
for SW in 0 1; do
  VELLUM_CUDA_ATTN_WG_VSWAP=$SW timeout 200 $C --attn-only > $O/attn-$SW.txt 2>&1; echo "attn checks vswap=$SW (exit $?): $(tail -1 $O/attn-$SW.txt)" >> $S
  grep FAIL $O/attn-$SW.txt | head -4 | cut -c1-250 >> $S
done
SW=0; grep -q " 0 failed" $O/attn-0.txt || SW=1
echo "using VSWAP=$SW" >> $S
export VELLUM_CUDA_ATTN_WG_VSWAP=$SW
timeout 200 $C --prefill-attn-only > $O/pa.txt 2>&1; grep "prefill attention" $O/pa.txt | cut -c1-400 >> $S
wait
for r in 1 2; do for W in 0 1; do for T in BF16 Q4_K_M; do
  VELLUM_CUDA_ATTN_WG=$W model_prefill wg$W-$r $C $T >> $S
done; done; done
cat $S
