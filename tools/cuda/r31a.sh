#!/usr/bin/env bash
# The knob and its code are on branch r31-prewait (measured, not kept: docs/cuda.md, round 31).
# Round 31, call 1: how much of a batch-1 GEMV's weights is loaded before the programmatic wait
# (VELLUM_CUDA_PREWAIT, an experiment knob: 1 Q8_0's every in-flight chunk, 2 Q4_K/Q6_K one-row
# launches of k <= 4 096 with all 4 passes, 4 the Q4_K_M Q/K/V pair's Q4_K blocks with 4 passes,
# 8 the Q4_K Q/K/V launch with 2 passes). llama3-8b synthetic batch 1, graphs + PDL, alternating,
# then the decode chain traced (traced build) with the knob off and on.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_trace.gz
chmod +x $D/vellum $D/vellum_cuda_check $D/vellum_cuda_check_trace
source $D/final_common.sh
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
for i in 1 2; do
  for P in 0 1; do b1 pw$P Q8_0 VELLUM_CUDA_PREWAIT=$P; done
  for P in 0 2 4 8 14; do b1 pw$P Q4_K_M VELLUM_CUDA_PREWAIT=$P; done
done
for T in Q4_K_M Q8_0; do
  for P in 0 15; do
    VELLUM_CUDA_PREWAIT=$P timeout 200 $D/vellum_cuda_check_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T-pw$P.md 2> /tmp/trace-$T-pw$P.log
    echo "trace $T pw$P: exit $?"
  done
done
cat $O/b1.txt
