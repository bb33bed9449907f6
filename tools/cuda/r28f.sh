#!/usr/bin/env bash
# Round 28, call 7: the committed default (the register-A kernel at 33..1 024 rows). Every op
# against the CPU, stories260K greedy, graphs vs eager, CPU vs GPU greedy and batch invariance
# (final_checks); --dq-only; the quick bench of llama3-8b Q4_K_M (default and VELLUM_CUDA_DQ_TMA=0)
# and Q8_0, and the prefill at 512 / 1 024 / 2 048 tokens.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
export SYNTH_TYPES="Q4_K_M Q8_0"
final_checks
S=$O/summary.txt
cat $O/final.txt > $S
dq_checks >> $S
q default Q4_K_M
q off Q4_K_M VELLUM_CUDA_DQ_TMA=0
q default Q8_0
cat $O/quick.txt >> $S
VELLUM_BENCH_PREFILL=512,1024,2048 model_prefill default $C Q4_K_M >> $S
cat $S
