#!/usr/bin/env bash
# Round 25, call 10: the decode kernels' copy rows without a division a row (attn_decode2_kernel, the
# deterministic mode's split path; round 5's attn_decode_kernel): attn_checks (call 10 itself ran only
# its attention, deterministic and det_proofs lines), then the deterministic BF16 prefill (split path)
# against commit da89343 (base).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_base.gz
source $D/final_common.sh
B=$D/vellum_cuda_check_base
nvidia-smi -L
$V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1 &
attn_checks
wait
for L in base new base new; do model_prefill "split-path-$L" $([ $L = base ] && echo $B || echo $C) BF16 --deterministic; done
