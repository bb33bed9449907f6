#!/usr/bin/env bash
# Round 52, call 2: 2-16-row Q/K/V in one launch and gate/up with the SwiGLU in the launch (the int8
# rows kernels). Checks (--rows-fused-only, --mma-x-only, model checks incl. --graphs), then aggregate
# decode at 1k context with the fusion on and off (VELLUM_CUDA_ROWS_FUSED=0), alternating.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0 &
rows_fused_checks
flag_checks --mma-x-only mma-x
wait
echo "[${SECONDS}s] synth" >> $S
fused_vs_off Q4_K_M 1,2,3,4,8,12,16 1,2,3,4,8,12,16
fused_vs_off Q8_0 2,3,4,8,12,16 2,3,4,8,12,16
echo "[${SECONDS}s]" >> $S
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks" >> $S
VELLUM_PROFILE_SEQS=4 timeout 200 /usr/local/cuda/bin/ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
  $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-4.csv 2> $O/ncu-4.log
echo "== ncu Q4_K_M, decode 4 seqs x 1k (exit $?)" >> $S
python3 $D/ncu_kernels.py $O/ncu-4.csv 12 >> $S 2>&1
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz rows-fused.txt mma-x.txt seqs-*.log ncu*.csv && rm -f rows-fused.txt mma-x.txt ncu*.csv
cat $S
