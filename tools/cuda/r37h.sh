#!/usr/bin/env bash
# Round 37, call 8: rope_kv_rows_kernel loading a thread's 4 tasks before storing (U = 4) against
# round 34's one task at a time (VELLUM_CUDA_ROPE_ROWS_U=1): the attention checks (rope_attention rows
# vs rope_store_kv bit for bit), ncu's kernel time, Q8_0 prefill at 512 alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1 &
timeout 100 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | cut -c1-200 | head -5 >> $S
grep -cE "rope_attention rows.*PASS" $O/attn.txt >> $S
wait
for u in 1 4; do
  VELLUM_CUDA_ROPE_ROWS_U=$u VELLUM_PROFILE_PREFILL=512 timeout 60 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > $O/ncu-u$u.csv 2>/dev/null
  echo "ncu U=$u: $(python3 $D/ncu_kernels.py $O/ncu-u$u.csv 14 | grep -E 'kernels,|rope_kv')" >> $S
done
export VELLUM_BENCH_PREFILL=512
for r in 1 2; do for u in 1 4; do VELLUM_CUDA_ROPE_ROWS_U=$u model_prefill u$u $C Q8_0 >> $S; done; done
cat $S
