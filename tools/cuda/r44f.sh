#!/usr/bin/env bash
# Round 44, call 6: the quick bench of llama3-8b Q4_K_M and Q8_0 (call 5's rule; the shape knob added), and the int8
# tensor-core rows kernel alone at 8 rows at every launch shape (VELLUM_CUDA_MMA_SHAPE), x staged and
# loaded (information for the next round's shape rule).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
for SH in 41 42 43 81 82 161; do
  VELLUM_CUDA_MMA_SHAPE=$SH VELLUM_BENCH_MMA_ROWS=8 VELLUM_BENCH_MMA_ONLY=1 timeout 100 $C --only-bench --gemv-only > /tmp/shape-$SH.txt 2>&1
  grep -E "^gemv mma" /tmp/shape-$SH.txt | sed -E "s/ \| rows GEMV.*//; s/^gemv mma /shape $SH /; s/ at 8 rows//" >> $O/shapes.txt
done
wait
q default Q4_K_M
q default Q8_0
cat $O/shapes.txt | cut -c1-140
cat $O/quick.txt
