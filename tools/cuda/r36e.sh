#!/usr/bin/env bash
# Round 36, call 5 (final checks on main): every op against the CPU (the fused SwiGLU, the exhaustive
# 16-bit SwiGLU and the two-way K split's end among them), stories260K greedy, graphs vs eager, CPU vs
# GPU greedy, batch invariance (final_checks).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
export SYNTH_TYPES="Q4_K_M"
final_checks
cat $O/final.txt >> $S
grep -E "fused SwiGLU|swiglu16 |two-way|K split" $O/check_table.txt | cut -c1-160 | head -20 >> $S
cat $S
