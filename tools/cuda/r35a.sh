#!/usr/bin/env bash
# Round 35, call 1: the adding store as a bulk f32 reduction in L2 (set_dq_tma_bulk_store bit 1) and
# the plain stores as bulk copies (bit 2). Checks (the many-row tails with and without, the dq
# checks with the bulk-copy store against the direct one), then prefill with VELLUM_CUDA_DQ_BULK_STORE
# 0 / 1 / 3 alternating, and the ncu split at 0 and 1.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --tail-rows-only > $O/tail.txt 2>&1; echo "tail checks (exit $?): $(tail -1 $O/tail.txt)" >> $S
grep -E "FAIL|layer_tail rows" $O/tail.txt | cut -c1-170 >> $S
dq_checks "bulk-copy" >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024
for r in 1 2; do
  for T in Q4_K_M Q8_0; do
    for b in 0 1 3; do VELLUM_CUDA_DQ_BULK_STORE=$b model_prefill b$b-$r $C $T >> $S; done
  done
done
for b in 0 1 3; do
  VELLUM_CUDA_DQ_BULK_STORE=$b VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu$b.csv 2> /tmp/ncu.log
  echo "== Q4_K_M prefill 512, ncu --clock-control none, bulk $b (exit $?)" >> $S
  python3 $D/ncu_kernels.py /tmp/ncu$b.csv 14 >> $S 2>&1
done
cat $S
