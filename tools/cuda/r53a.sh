#!/bin/bash
# Round 53, call 1: the wide int8 tensor-core kernel (17-32 rows, gemv_mma_wide.h): --mma-x-only (its
# matmuls against f64, run twice) and --rows-fused-only (20 / 32 rows), the kernel alone at 16 / 24 /
# 32 rows with its shape knobs, and llama3-8b Q4_K_M at 16-32 sequences against round 52's dq_tma.
D=$(cd "$(dirname "$0")" && pwd); . $D/final_common.sh
begin_call
flag_checks --mma-x-only mma-x 400
echo "wide (17-32 rows) checks passed: $(checks $O/mma-x.txt 'rows (17|20|24|32) \(int8 mma rows')" >> $S
rows_fused_checks
(synth_l8b Q4_K_M Q8_0) &
gemv() {  # LABEL TYPES ROWS ENV...: the kernel alone
  local L=$1 T=$2 R=$3; shift 3
  env "$@" VELLUM_BENCH_QUICK=1 VELLUM_BENCH_MMA_ONLY=1 VELLUM_BENCH_GEMV_TYPES=$T ${R:+VELLUM_BENCH_MMA_ROWS=$R} timeout 200 $C --only-bench --gemv-only > $O/gemv-$L.txt 2>&1
  grep "gemv mma" $O/gemv-$L.txt | grep -E "at (16|24|32) rows" | sed -E "s/^gemv mma/$L/; s/ \| x staged.*\| mmq/ | mmq/; s/ +/ /g" | cut -c1-170 >> $S
}
for T in Q4_K Q8_0 Q6_K; do gemv $T $T ""; done
for k in 4 8 8,4 8,16 8,-1; do gemv "Q4_K-$k" Q4_K 32 VELLUM_CUDA_MMA_WIDE=$k; done
echo "[${SECONDS}s] synth" >> $S
wait
for r in 1 2; do
  seqs wide$r Q4_K_M 16,20,24,32
  seqs tma$r Q4_K_M 16,20,24,32 VELLUM_CUDA_GEMV_MMA_MAX=16
done
echo "[${SECONDS}s]" >> $S
cat $S
