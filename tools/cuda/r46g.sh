#!/usr/bin/env bash
# Round 46, call 7: launch shapes of the other batch-1 launches (measurement knobs): Q8_0's Q/K/V at
# 2 or 1 weight rows a warp instead of 4 (VELLUM_CUDA_I8_R), its SwiGLU at 2 instead of 4
# (VELLUM_CUDA_I8_SWIGLU_R), Q4_K_M's Q4_K SwiGLU at 1 or 4 passes instead of 2
# (VELLUM_CUDA_KQ_SWIGLU_P). Bits: --multi-only with the knobs; then llama3-8b batch 1, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
for K in "VELLUM_CUDA_I8_R=2 VELLUM_CUDA_I8_SWIGLU_R=2 VELLUM_CUDA_KQ_SWIGLU_P=4" "VELLUM_CUDA_I8_R=1 VELLUM_CUDA_KQ_SWIGLU_P=1"; do
  env $K timeout 100 $C --multi-only > $O/multi.txt 2>&1; echo "multi checks with $K (exit $?): $(tail -1 $O/multi.txt)" >> $S
  grep -E "FAIL" $O/multi.txt | cut -c1-200 | head -5 >> $S
done
left checks done
wait
for i in 1 2; do
  b1 main Q8_0; b1 R2 Q8_0 VELLUM_CUDA_I8_R=2; b1 R1 Q8_0 VELLUM_CUDA_I8_R=1; b1 swR2 Q8_0 VELLUM_CUDA_I8_SWIGLU_R=2
  b1 main Q4_K_M; b1 swP1 Q4_K_M VELLUM_CUDA_KQ_SWIGLU_P=1; b1 swP4 Q4_K_M VELLUM_CUDA_KQ_SWIGLU_P=4
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
