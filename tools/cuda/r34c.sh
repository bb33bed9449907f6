#!/usr/bin/env bash
# Round 34, call 3: call 2's binary with three fixes (the residual GEMM no longer materializes the
# SwiGLU's f32 rows; x's loads of the residual store all in flight; rope_kv_rows takes interleaved
# pairs, Llama's layout). Checks as call 2, then prefill on / off alternating and the ncu split.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --layer-only > $O/layer.txt 2>&1; echo "layer checks (exit $?): $(tail -1 $O/layer.txt)" >> $S
grep -E "FAIL|layer_tail rows" $O/layer.txt | grep -v "vs CPU" | cut -c1-160 >> $S
timeout 300 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL|rope_attention rows.*(took|left)" $O/attn.txt | cut -c1-160 | sort -u | head -30 >> $S
dq_checks >> $S
model_checks >> $S 2>&1
wait
export VELLUM_BENCH_PREFILL=512,1024
for r in 1 2; do
  for T in Q4_K_M Q8_0; do
    model_prefill new$r $C $T >> $S
    VELLUM_CUDA_ROPE_ROWS=0 VELLUM_CUDA_RESIDUAL_ROWS=0 model_prefill off$r $C $T >> $S
  done
done
VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu.csv 2> /tmp/ncu.log
echo "== Q4_K_M prefill 512, ncu --clock-control none (exit $?)" >> $S
python3 $D/ncu_kernels.py /tmp/ncu.csv 24 >> $S 2>&1
cat $S
