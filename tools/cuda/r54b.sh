#!/usr/bin/env bash
# Round 54, call 2 (and 3, the weights through a cp.async ring): dq_rows (17-64 token rows of Q4_K / Q6_K on bf16 mma.sync, dq_rows.h). Its checks
# (--dq-rows-only: against f64, dq_tma, bits; the fused SwiGLU), the many-row layer tails at 24 / 40
# rows (the adding store), --plan-bench at 24 / 32 / 64 rows (default = dq_rows, forced = dq_tma),
# llama3-8b Q4_K_M aggregate decode at 16-64 sequences against VELLUM_CUDA_DQ_ROWS_MAX=0, and ncu of a
# 32-sequence step, time per kernel.
# Needs the binaries built with tools/cuda/results/r54-dq-rows.patch applied (--dq-rows-only, VELLUM_CUDA_DQ_ROWS_MAX).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
export PATH=/usr/local/cuda/bin:$PATH
synth_l8b Q4_K_M &
flag_checks --dq-rows-only dqrows
flag_checks --tail-rows-only tail 150
wait
plan_bench 24,32,64
seqs rows Q4_K_M 16,20,24,32,48,64
seqs tma Q4_K_M 16,20,24,32,48,64 VELLUM_CUDA_DQ_ROWS_MAX=0
VELLUM_PROFILE_SEQS=32 timeout 150 ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
  $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu32.csv 2> $O/ncu32.log
echo "== ncu, decode 32 seqs x 1k (exit $?)" >> $S
python3 $D/ncu_kernels.py $O/ncu32.csv 10 >> $S 2>&1
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz dqrows.txt tail.txt plans.txt seqs-*.log ncu* && rm -f ncu* plans.txt dqrows.txt tail.txt
cat $S
