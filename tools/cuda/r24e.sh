#!/usr/bin/env bash
# Round 24, call 6 (the final binary: packed tensor-core spans of 8 tiles behind VELLUM_CUDA_DET_ATTN_TC=1): the full
# check (run5.sh, both deterministic attention paths among the op checks) with invariance, --det-only, and the
# deterministic proofs with the knob on (BF16, F16).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
SYNTH_TYPES=" " final_checks
cat $O/final.txt
grep -E "deterministic attention" $O/check_table.txt | cut -c1-200
timeout 200 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"
VELLUM_CUDA_DET_ATTN_TC=1 det_proofs BF16 F16
