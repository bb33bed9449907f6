#!/usr/bin/env bash
# Round 38, call 8: store_rope_128 for llama's interleaved pairs too (call 7's stall samples: llama's
# GGUF rope is interleaved, so call 5's halves-only form was never taken, and the generic loop's
# cos/sin copy made each load wait). --attn-only (two new interleaved 128-dim shapes); --qkv-rope on
# Q8_0 and Q4_K_M; ncu's first launches off / on; prefill 512 alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 150 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 100 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep -E "FAIL" /tmp/attn.txt | sort -u | cut -c1-220 >> $S; grep -E "RoPE in its end, interleaved Q" /tmp/attn.txt | grep -c PASS >> $S
wait
for T in Q8_0 Q4_K_M; do left qkv-rope $T && { timeout 60 $C --qkv-rope /tmp/l8b-$T.gguf 2>&1 | grep -E "FAIL|checks," >> $S; }; done
for f in 0 1; do
  left ncu $f && { VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 40 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncu-$f.csv 2>/dev/null
  echo "== QKV_ROPE=$f" >> $S; python3 $D/ncu_sequence.py /tmp/ncu-$f.csv "rs_kernel" 3 >> $S 2>&1; python3 $D/ncu_kernels.py /tmp/ncu-$f.csv 1 >> $S; }
done
export VELLUM_BENCH_PREFILL=512
for r in 1 2; do for f in 0 1; do left prefill Q8_0 $f && VELLUM_CUDA_QKV_ROPE=$f model_prefill rope$f $C Q8_0 >> $S; done; done
for f in 0 1; do left prefill Q4_K_M $f && VELLUM_CUDA_QKV_ROPE=$f model_prefill rope$f $C Q4_K_M >> $S; done
echo "done at ${SECONDS}s" >> $S
cat $S
