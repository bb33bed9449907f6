#!/usr/bin/env bash
# Round 38, call 3: store_rope_t reading DqRope's fields once (call 2: the compiler reloaded them from
# the kernel's parameters after every store, +31 µs a Q/K/V launch). check_qkv_rope (--attn-only);
# ncu with the fusion off / on, and one fused Q/K/V launch's stall reasons; prefill alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 420 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
nvidia-smi -L >> $S
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep -E "FAIL" /tmp/attn.txt | sort -u | cut -c1-220 >> $S; grep -cE "RoPE in its end.*PASS" /tmp/attn.txt >> $S
wait
for f in 0 1; do
  left ncu rope $f && { VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 60 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncu-$f.csv 2>/dev/null
  echo "ncu QKV_ROPE=$f: $(python3 $D/ncu_kernels.py /tmp/ncu-$f.csv 14 | grep -E 'kernels,|rope|dq_tma_rs' | tr '\n' ';')" >> $S; }
done
M='regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$'
for f in 0 1; do
  left ncu detail $f && { VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 90 ncu --clock-control none --profile-from-start off --kernel-name-base demangled -k "regex:dq_tma_rs_kernel<.*WQ8_0, 256, float>" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --metrics "$M,launch__grid_size" $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncud-$f.txt 2>&1
  grep -E "Duration|grid_size|Memory Throughput|Compute \(SM\)" /tmp/ncud-$f.txt | sed -E 's/ +/ /g' | tr '\n' ';' >> $S; echo >> $S
  grep -E "issue_stalled" /tmp/ncud-$f.txt | sed -E 's/ +/ /g; s/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '$NF+0 > 0.2' | tr '\n' ';' >> $S; echo >> $S; }
done
export VELLUM_BENCH_PREFILL=512
for r in 1 2 3; do for f in 0 1; do
  left prefill Q8_0 rope $f && VELLUM_CUDA_QKV_ROPE=$f VELLUM_CUDA_DQ_CUT_SPLIT=1 model_prefill r${f}s1 $C Q8_0 >> $S; done; done
export VELLUM_BENCH_PREFILL=512,2048
for r in 1 2; do for cfg in "0 0" "1 0" "0 1"; do set -- $cfg
  left prefill Q4_K_M r$1 s$2 && VELLUM_CUDA_QKV_ROPE=$1 VELLUM_CUDA_DQ_CUT_SPLIT=$2 model_prefill r$1s$2 $C Q4_K_M >> $S; done; done
echo "done at ${SECONDS}s" >> $S
cat $S
