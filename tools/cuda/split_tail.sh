#!/usr/bin/env bash
# Branch r37-split-tail, its first device call (not yet run): the fused SwiGLU's last wave as
# 256-token tiles split two ways in K (VELLUM_CUDA_DQ_CUT_SPLIT=1, Q8_0 included) against the
# default (128-token tiles; Q8_0 one launch of 3.4 waves). --dq-only holds its checks
# (check_dq_swiglu_split_tail); then the plan bench and the 512-token prefill, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --dq-only > $O/dq.txt 2>&1; echo "dq checks (exit $?): $(tail -1 $O/dq.txt)" >> $S
grep -E "FAIL|split last wave" $O/dq.txt | cut -c1-200 >> $S
wait
for c in 0 1; do VELLUM_CUDA_DQ_CUT_SPLIT=$c timeout 200 $C --plan-bench > $O/plan-$c.txt 2>&1; grep -E "SwiGLU" $O/plan-$c.txt | grep -E "rows (384|512)" | sed "s/^/split=$c /" | cut -c1-190 >> $S; done
export VELLUM_BENCH_PREFILL=512
for r in 1 2; do for T in Q8_0 Q4_K_M; do for c in 0 1; do VELLUM_CUDA_DQ_CUT_SPLIT=$c model_prefill split$c $C $T >> $S; done; done; done
cat $S
