#!/usr/bin/env bash
# Round 38, call 2: store_rope_t loading U = 8 tasks' slots and cos/sin before their stores (call 1:
# one task at a time, +26 µs a Q/K/V launch). check_qkv_rope (--attn-only); --dq-only (the split-tail
# check_swiglu_rows now against the unsplit launches within bf16's rounding); ncu with the fusion off /
# on; prefill 512 alternating, rope R x split S.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 520 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
nvidia-smi -L >> $S
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep -E "FAIL" /tmp/attn.txt | sort -u | cut -c1-220 >> $S; grep -cE "RoPE in its end.*PASS" /tmp/attn.txt >> $S
timeout 200 $C --dq-only > /tmp/dq.txt 2>&1; echo "dq checks (exit $?): $(tail -1 /tmp/dq.txt)" >> $S
grep -E "FAIL|split last wave\) vs" /tmp/dq.txt | sort -u | cut -c1-220 >> $S
wait
for f in 0 1; do
  left ncu rope $f && { VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 60 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncu-$f.csv 2>/dev/null
  echo "ncu QKV_ROPE=$f: $(python3 $D/ncu_kernels.py /tmp/ncu-$f.csv 14 | grep -E 'kernels,|rope|dq_tma_rs' | tr '\n' ';')" >> $S; }
done
export VELLUM_BENCH_PREFILL=512
for r in 1 2 3; do for cfg in "0 0" "0 1" "1 0" "1 1"; do set -- $cfg
  left prefill Q8_0 r$1 s$2 && VELLUM_CUDA_QKV_ROPE=$1 VELLUM_CUDA_DQ_CUT_SPLIT=$2 model_prefill r$1s$2 $C Q8_0 >> $S; done; done
export VELLUM_BENCH_PREFILL=512,2048
for r in 1 2; do for cfg in "0 0" "1 0" "1 1"; do set -- $cfg
  left prefill Q4_K_M r$1 s$2 && VELLUM_CUDA_QKV_ROPE=$1 VELLUM_CUDA_DQ_CUT_SPLIT=$2 model_prefill r$1s$2 $C Q4_K_M >> $S; done; done
echo "done at ${SECONDS}s" >> $S
cat $S
