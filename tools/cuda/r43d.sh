#!/usr/bin/env bash
# Round 43, call 4: the Q4_K/Q6_K producers' shapes (R rows a warp, P passes in flight) for the output
# projection (VELLUM_CUDA_ROW_NORM_SHORT) and the down projection (VELLUM_CUDA_ROW_NORM_LONG), batch 1
# of llama3-8b Q4_K_M, two rounds alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
left synth done
for r in 1 2; do
  b1 default Q4_K_M
  for x in 21 14 11; do b1 short$x Q4_K_M VELLUM_CUDA_ROW_NORM_SHORT=$x; done
  for x in 14 12 11 21; do b1 long$x Q4_K_M VELLUM_CUDA_ROW_NORM_LONG=$x; done
done
b1 off Q4_K_M VELLUM_CUDA_ROW_NORM=0
cut -d'|' -f1 $O/b1.txt >> $S
left b1 done
cat $S
