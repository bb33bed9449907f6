#!/usr/bin/env bash
# Round 26, call 8: main's binary (dq_mma.cu split into dq_weights.cuh and dq_finish.cuh, the same
# SASS): the new --dq-only checks, and model_checks (stories260K greedy, graphs vs eager, CPU vs GPU
# greedy).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
dq_checks >> $S
model_checks >> $S 2>&1
cat $S
