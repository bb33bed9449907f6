#!/usr/bin/env bash
# Round 38, call 5: store_rope_128 (llama's heads: a compile-time task layout, no division in the
# loop; call 4: the generic loop +3.4 M instructions, 51.8 -> 81.6 µs a Q/K/V launch) and the split
# tail on by default. Every op against the CPU and the model checks (final_checks); --qkv-rope on
# llama3-8b Q8_0 and Q4_K_M (a model's logits with the fusion on vs off, bit for bit); ncu's first
# launches with the fusion off / on; prefill 512 alternating; the quick bench on the default path.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 480 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
nvidia-smi -L >> $S
SYNTH_TYPES="Q8_0 Q4_K_M" final_checks
cat $O/final.txt >> $S
grep -cE "RoPE in its end.*PASS" $O/check_table.txt >> $S
grep -E "split last wave\) vs|fused SwiGLU Q8_0 4600x4096 rows 512: taken" $O/check_table.txt | cut -c1-200 >> $S
for T in Q8_0 Q4_K_M; do left qkv-rope $T && { timeout 120 $C --qkv-rope /tmp/l8b-$T.gguf 2>&1 | grep -E "RoPE in the Q/K/V|checks," | sed -E 's/ +/ /g' | cut -c1-220 >> $S; }; done
for f in 0 1; do
  left ncu rope $f && { VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 60 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncu-$f.csv 2>/dev/null
  echo "== QKV_ROPE=$f" >> $S; python3 $D/ncu_sequence.py /tmp/ncu-$f.csv "rs_kernel" 6 >> $S 2>&1
  python3 $D/ncu_kernels.py /tmp/ncu-$f.csv 3 >> $S; }
done
export VELLUM_BENCH_PREFILL=512
for r in 1 2 3; do for f in 0 1; do left prefill Q8_0 rope $f && VELLUM_CUDA_QKV_ROPE=$f model_prefill rope$f $C Q8_0 >> $S; done; done
for r in 1 2; do for f in 0 1; do left prefill Q4_K_M rope $f && VELLUM_CUDA_QKV_ROPE=$f model_prefill rope$f $C Q4_K_M >> $S; done; done
unset VELLUM_BENCH_PREFILL
for T in Q8_0 Q4_K_M; do left quick $T && q main $T; done
cat $O/quick.txt >> $S
echo "done at ${SECONDS}s" >> $S
cat $S
