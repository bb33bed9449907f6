#!/usr/bin/env bash
# Round 30, call 8 (its knobs were in that call's build only, not committed): the batch-1 GEMVs' loads in flight, in the decode chain (graphs + PDL), one
# binary: passes a warp for the 1-row Q4_K / Q6_K down projections (VELLUM_CUDA_KQ_LONG_P; default
# Q6_K 1, Q4_K 2), for the Q4_K SwiGLU pair (VELLUM_CUDA_KQ_SWIGLU_P; default 2), and Q8_0's rows a
# warp for the down projection (VELLUM_CUDA_I8_LONG_R; default 4). llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
for R in 1 2; do
  b1 default-$R Q4_K_M
  b1 longp2-$R Q4_K_M VELLUM_CUDA_KQ_LONG_P=2
  b1 longp4-$R Q4_K_M VELLUM_CUDA_KQ_LONG_P=4
  b1 swp4-$R Q4_K_M VELLUM_CUDA_KQ_SWIGLU_P=4
  b1 default-$R Q8_0
  b1 longr2-$R Q8_0 VELLUM_CUDA_I8_LONG_R=2
  b1 longr1-$R Q8_0 VELLUM_CUDA_I8_LONG_R=1
done
cat $O/b1.txt
