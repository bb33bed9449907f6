#!/usr/bin/env bash
# Round 37, call 1 (main d47e493 on an H200): the baseline on the new machine kind. dq checks, the
# model checks, ncu of a 512-token Q4_K_M prefill, the quick bench for Q4_K_M, Q8_0, BF16.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,power.limit --format=csv
S=$O/summary.txt
(for T in Q4_K_M Q8_0 BF16; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --dq-only > $O/dq.txt 2>&1; echo "dq checks (exit $?): $(tail -1 $O/dq.txt)" >> $S
grep FAIL $O/dq.txt | head -5 >> $S
model_checks >> $S 2>&1
wait
VELLUM_PROFILE_PREFILL=512 timeout 200 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > $O/ncu.csv 2>/dev/null
echo "ncu exit $?" >> $S; python3 $D/ncu_kernels.py $O/ncu.csv 14 >> $S 2>&1
for T in Q4_K_M Q8_0 BF16; do q main $T; done
cat $O/quick.txt >> $S
cat $S
