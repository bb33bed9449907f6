#!/usr/bin/env bash
# Round 52, call 3: a warp's rows in one segment (the rows kernels back at their registers); why 2
# sequences were slower with the fusion off (call 2): the rows checks, 2-sequence decode by itself and
# in a list, fused and off, and ncu of one 2-sequence step each way.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
synth_l8b Q4_K_M Q8_0 &
rows_fused_checks
wait
echo "[${SECONDS}s] synth" >> $S
for r in 1 2; do
  seqs fused$r Q4_K_M 2
  seqs off$r Q4_K_M 2 VELLUM_CUDA_ROWS_FUSED=0
  seqs fusedl$r Q4_K_M 1,2,3,4,8,12,16
  seqs offl$r Q4_K_M 1,2,3,4,8 VELLUM_CUDA_ROWS_FUSED=0
done
for r in 1 2; do
  seqs fused$r Q8_0 2
  seqs off$r Q8_0 2 VELLUM_CUDA_ROWS_FUSED=0
  seqs fusedl$r Q8_0 1,2,3,4,8,12,16
done
echo "[${SECONDS}s]" >> $S
for F in 1 0; do
  VELLUM_CUDA_ROWS_FUSED=$F VELLUM_PROFILE_SEQS=2 timeout 200 /usr/local/cuda/bin/ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
    $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu-2-$F.csv 2> $O/ncu-2-$F.log
  echo "== ncu Q4_K_M, decode 2 seqs x 1k, ROWS_FUSED=$F (exit $?)" >> $S
  python3 $D/ncu_kernels.py $O/ncu-2-$F.csv 10 >> $S 2>&1
done
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz rows-fused.txt seqs-*.log ncu*.csv && rm -f rows-fused.txt ncu*.csv seqs-*.log
cat $S
