#!/usr/bin/env bash
# Round 35, call 4: the clusters' remote loads 8 at a time, Q6_K's launches left out of the clusters
# (bit 8 puts them back). The kernel bench, the checks, prefill at VELLUM_CUDA_DQ_CLUSTER 0 / 1 / 7
# alternating, the ncu split at 7.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 120 $C --cluster-bench 2>&1 | grep "^dq_tma" | sort -u >> $S
dq_checks "through a cluster.*FAIL" >> $S
VELLUM_CUDA_DQ_CLUSTER=7 timeout 200 $C --tail-rows-only > $O/tail7.txt 2>&1; echo "tail checks, cluster 7 (exit $?): $(tail -1 $O/tail7.txt)" >> $S
wait
export VELLUM_BENCH_PREFILL=512,1024
for r in 1 2; do
  for T in Q4_K_M Q8_0; do
    for c in 0 1 7; do VELLUM_CUDA_DQ_CLUSTER=$c model_prefill c$c-$r $C $T >> $S; done
  done
done
VELLUM_CUDA_DQ_CLUSTER=7 VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu7.csv 2> /tmp/ncu.log
echo "== Q4_K_M prefill 512, ncu --clock-control none, cluster 7 (exit $?)" >> $S
python3 $D/ncu_kernels.py /tmp/ncu7.csv 8 >> $S 2>&1
cat $S
