#!/usr/bin/env bash
# Round 28, call 6: the register-A kernel with 64-token tiles (up to 64 rows). Its checks (--dq-only),
# and the quick bench (batch 1, aggregate decode, prefill) of llama3-8b Q4_K_M with the kernel from
# 65 rows (the default), from 33 and from 17 rows (VELLUM_CUDA_DQ_TMA_MIN; below, dq_mma), and
# Q8_0 with the default and with the kernel off.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
dq_checks >> $S
cat $S
wait
q default Q4_K_M
q min33 Q4_K_M VELLUM_CUDA_DQ_TMA_MIN=33
q min17 Q4_K_M VELLUM_CUDA_DQ_TMA_MIN=17
q default Q8_0
q off Q8_0 VELLUM_CUDA_DQ_TMA=0
q min33 Q8_0 VELLUM_CUDA_DQ_TMA_MIN=33
cat $O/quick.txt >> $S
cat $S
