#!/usr/bin/env bash
# Round 37, call 3: Q8_0's fragments by byte permute + FMA (same bits); round 33's wave cut for Q8_0
# (VELLUM_CUDA_DQ_CUT_Q8=1) measured against none: dq checks both ways, the plan bench both ways,
# 512-token prefill alternating, ncu of the cut's Q8_0 prefill; where a batch-1 token goes on the
# H200 (VELLUM_CUDA_ABLATE 15: all but the GEMVs skipped, 16: the GEMVs skipped).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --dq-only > $O/dq.txt 2>&1; echo "dq checks (exit $?): $(tail -1 $O/dq.txt)" >> $S
grep FAIL $O/dq.txt | cut -c1-200 | head -8 >> $S
VELLUM_CUDA_DQ_CUT_Q8=1 timeout 200 $C --dq-only > $O/dq-cut.txt 2>&1; echo "dq checks, Q8_0 cut (exit $?): $(tail -1 $O/dq-cut.txt)" >> $S
grep FAIL $O/dq-cut.txt | cut -c1-200 | head -8 >> $S
wait
for c in 0 1; do VELLUM_CUDA_DQ_CUT_Q8=$c timeout 200 $C --plan-bench > $O/plan-$c.txt 2>&1; echo "plan bench cut=$c exit $?" >> $S; grep -E "Q8_0" $O/plan-$c.txt | cut -c1-200 >> $S; done
grep -E "Q4_K" $O/plan-1.txt | grep -E "rows (512|384)" | cut -c1-200 >> $S
export VELLUM_BENCH_PREFILL=512,1024,2048
for r in 1 2; do for c in 0 1; do VELLUM_CUDA_DQ_CUT_Q8=$c model_prefill cut$c $C Q8_0 >> $S; done; done
model_prefill main $C Q4_K_M >> $S
unset VELLUM_BENCH_PREFILL
VELLUM_CUDA_DQ_CUT_Q8=1 VELLUM_PROFILE_PREFILL=512 timeout 200 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > $O/ncu-q8.csv 2>/dev/null
echo "ncu Q8_0 cut exit $?" >> $S; python3 $D/ncu_kernels.py $O/ncu-q8.csv 10 >> $S 2>&1
for a in 0 15 16; do b1 ablate$a Q4_K_M VELLUM_CUDA_ABLATE=$a; done
for a in 0 15; do b1 ablate$a Q8_0 VELLUM_CUDA_ABLATE=$a; done
cut -c1-150 $O/b1.txt >> $S
cat $S
