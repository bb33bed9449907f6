#!/usr/bin/env bash
# Branch r37-qkv-rope, its first device call (not yet run): RoPE and the K/V store in the grouped
# Q/K/V launch's end (VELLUM_CUDA_QKV_ROPE, default on in the branch). --attn-only holds
# check_qkv_rope (the fused path against rope_kv_rows after the plain launch, bit for bit); the model
# checks; ncu's kernel times and the 512 / 2 048-token prefill with the fusion off / on, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL|RoPE in its end" $O/attn.txt | cut -c1-200 >> $S
model_checks >> $S 2>&1
wait
for f in 0 1; do
  VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 100 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > $O/ncu-$f.csv 2>/dev/null
  echo "ncu QKV_ROPE=$f: $(python3 $D/ncu_kernels.py $O/ncu-$f.csv 14 | grep -E 'kernels,|rope|dq_tma_rs' | tr '\n' ';')" >> $S
done
export VELLUM_BENCH_PREFILL=512,2048
for r in 1 2; do for T in Q8_0 Q4_K_M; do for f in 0 1; do VELLUM_CUDA_QKV_ROPE=$f model_prefill rope$f $C $T >> $S; done; done; done
cat $S
