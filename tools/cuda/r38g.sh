#!/usr/bin/env bash
# Round 38, call 6 (the final binary: the split tail on, the Q/K/V RoPE fusion opt-in): --attn-only
# (check_qkv_rope turning the fusion on itself), --qkv-rope on Q8_0, the quick bench for Q8_0 and
# Q4_K_M, and Q8_0's 512-token prefill twice more.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L >> $S
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep -E "FAIL" /tmp/attn.txt | sort -u | cut -c1-220 >> $S; grep -cE "RoPE in its end.*PASS" /tmp/attn.txt >> $S
wait
timeout 120 $C --qkv-rope /tmp/l8b-Q8_0.gguf 2>&1 | grep -E "checks," >> $S
for T in Q8_0 Q4_K_M; do q main $T; done
cat $O/quick.txt >> $S
export VELLUM_BENCH_PREFILL=512
for r in 1 2; do model_prefill main $C Q8_0 >> $S; done
echo "done at ${SECONDS}s" >> $S
cat $S
