#!/usr/bin/env bash
# Round 16 final call: the committed binary's checks (run5.sh: every op vs the CPU, stories260K
# greedy, graphs vs eager, CPU vs GPU greedy; the deterministic mode's batch invariance), then the
# quick llama3-8b bench (batch 1, aggregate decode at 1k context, prefill) with the norm kernel at
# 256 threads (round 15) and 512 (the new default), the same binary. Run next to the stripped
# vellum, vellum_cuda_check, lib/, fixtures/, run5.sh, stories_greedy.py and final_common.sh.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
final_checks
for T in Q4_K_M BF16; do
  q nt256 $T VELLUM_CUDA_NORM_THREADS=256
  q nt512 $T X=1
done
cat $O/final.txt $O/quick.txt
