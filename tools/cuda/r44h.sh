#!/usr/bin/env bash
# Round 44, call 8: the quick bench of llama3-8b Q8_0 and Q4_K_M on the final binary (the rows kernel's
# new shapes).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait)
q final Q8_0
cat $O/quick.txt
q final Q4_K_M
cat $O/quick.txt
