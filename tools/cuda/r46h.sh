#!/usr/bin/env bash
# Round 46, call 8: call 7's one lead, confirmed or not: llama3-8b Q4_K_M batch 1 with the Q4_K
# SwiGLU at 1 pass a warp (VELLUM_CUDA_KQ_SWIGLU_P=1) against the default 2, four alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for i in 1 2 3 4; do b1 P2 Q4_K_M; b1 P1 Q4_K_M VELLUM_CUDA_KQ_SWIGLU_P=1; done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
