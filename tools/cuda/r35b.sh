#!/usr/bin/env bash
# Round 35, call 2: the K split through clusters (VELLUM_CUDA_DQ_CLUSTER bits: 1 the exchange
# through distributed shared memory, 2 the SwiGLU's last wave as 256-token tiles split 2 ways, 4
# small weights as 256-token tiles split). Checks, then prefill at 0 / 1 / 3 / 7 alternating, the
# ncu split at 0 and 7, and the quick bench's decode at 0 and 1.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "through a cluster" >> $S
for c in 0 7; do
  VELLUM_CUDA_DQ_CLUSTER=$c timeout 200 $C --tail-rows-only > $O/tail$c.txt 2>&1; echo "tail checks, cluster $c (exit $?): $(tail -1 $O/tail$c.txt)" >> $S
  grep -E "FAIL" $O/tail$c.txt | cut -c1-170 >> $S
done
wait
export VELLUM_BENCH_PREFILL=512,1024
for r in 1 2; do
  for T in Q4_K_M Q8_0; do
    for c in 0 1 3 7; do VELLUM_CUDA_DQ_CLUSTER=$c model_prefill c$c-$r $C $T >> $S; done
  done
done
for c in 0 7; do
  VELLUM_CUDA_DQ_CLUSTER=$c VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu$c.csv 2> /tmp/ncu.log
  echo "== Q4_K_M prefill 512, ncu --clock-control none, cluster $c (exit $?)" >> $S
  python3 $D/ncu_kernels.py /tmp/ncu$c.csv 10 >> $S 2>&1
done
for c in 0 1 0 1; do q c$c Q4_K_M VELLUM_CUDA_DQ_CLUSTER=$c; done
cat $O/quick.txt >> $S
cat $S
