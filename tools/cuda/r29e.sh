#!/usr/bin/env bash
# Round 29, call 5: the one-row kernel's second version (a query head a block, a head's slices one
# cluster merged through distributed shared memory). --attn-only, stories260K greedy, graphs vs eager,
# CPU vs GPU greedy (model_checks); batch-1 decode of llama3-8b Q4_K_M and Q8_0 with the kernel, without
# (VELLUM_CUDA_ROPE_ATTN=0) and leaving after its wait (DBG 1), alternating; the quick bench of both.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
timeout 200 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)" >> $S
grep FAIL $O/attn-check.txt | head -8 | cut -c1-220 >> $S
grep -E "rope_attention .*(took|left)" $O/attn-check.txt | awk '{print $NF}' | sort | uniq -c >> $S
grep -E "rope_attention .* vs f64 on" $O/attn-check.txt | grep -v unfused | awk '{print $(NF-3)}' | sort -g | tail -1 | sed 's/^/largest fused vs f64: /' >> $S
model_checks >> $S 2>&1
wait
for R in 1 2; do
  for T in Q4_K_M Q8_0; do
    b1 fused$R $T
    b1 off$R $T VELLUM_CUDA_ROPE_ATTN=0
  done
done
b1 dbg1 Q4_K_M VELLUM_CUDA_ROPE_ATTN_DBG=1
b1 ablate6 Q4_K_M VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=6
cat $O/b1.txt >> $S
q fused Q4_K_M
q off Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
q fused Q8_0
q off Q8_0 VELLUM_CUDA_ROPE_ATTN=0
cat $O/quick.txt >> $S
cat $S
