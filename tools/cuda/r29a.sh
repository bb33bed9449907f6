#!/usr/bin/env bash
# Round 29, call 1: RoPE, the K/V store and the attention of a one-row step in one kernel
# (attn_rope_row.h). --attn-only (the round's rope_attention checks among them), stories260K greedy,
# graphs vs eager and CPU vs GPU greedy (model_checks); batch-1 decode of llama3-8b Q4_K_M and Q8_0
# with the kernel and without (VELLUM_CUDA_ROPE_ATTN=0), alternating; without it, the ablation of
# RoPE + attention (VELLUM_CUDA_ABLATE=6: both kernels skipped, the step's floor for them); the
# quick bench (1 to 256 sequences at 1k context) of Q4_K_M both ways.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
attn() {
  timeout 200 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)"
  grep FAIL $O/attn-check.txt | head -8 | cut -c1-220
  grep -E "rope_attention .*(took|left)" $O/attn-check.txt | awk '{print $NF}' | sort | uniq -c
  grep -E "rope_attention .* vs f64 on" $O/attn-check.txt | awk '{print $(NF-3)}' | sort -g | tail -1 | sed 's/^/largest fused vs f64: /'
}
attn >> $S 2>&1
model_checks >> $S 2>&1
wait
for R in 1 2; do
  for T in Q4_K_M Q8_0; do
    b1 fused$R $T
    b1 off$R $T VELLUM_CUDA_ROPE_ATTN=0
  done
done
b1 off-ablate6 Q4_K_M VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=6
b1 off-ablate4 Q4_K_M VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=4
b1 off-ablate6 Q8_0 VELLUM_CUDA_ROPE_ATTN=0 VELLUM_CUDA_ABLATE=6
cat $O/b1.txt >> $S
q fused Q4_K_M
q off Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
cat $O/quick.txt >> $S
cat $S
