#!/usr/bin/env bash
# Round 50, call 3: the Q4_K / Q6_K launches' weights prefetched into L1 ahead of their register
# loads (VELLUM_CUDA_KQ_PREFETCH=D[,1]): llama3-8b Q4_K_M batch 1 after 16 tokens, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
for r in 1 2; do
  b1 off Q4_K_M
  for pf in 1 2 4 1,1 2,1; do b1 pf$pf Q4_K_M VELLUM_CUDA_KQ_PREFETCH=$pf; done
done
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
