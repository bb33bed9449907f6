#!/usr/bin/env bash
# Round 43, call 8: the final binary's batch 1 on llama3-8b BF16 (its GEMVs store through the same
# RowMap::store, now times a factor of 1) and the quick bench of llama3-8b Q4_K_M.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait)
b1 on BF16; b1 on BF16
cut -d'|' -f1 $O/b1.txt
q default Q4_K_M
cat $O/quick.txt
