#!/usr/bin/env bash
# Round 30, call 10 (its knob was in that call's build only, not committed): Q8_0's rows a warp for
# every one-shot int8 launch (VELLUM_CUDA_I8_R=2: 2, SwiGLU 4; =1: 1, SwiGLU 2; default 4 at 4 096+
# weight rows), batch-1 decode of llama3-8b Q8_0, graphs + PDL, alternating.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1
for R in 1 2; do for V in 0 2 1; do b1 r$V-$R Q8_0 VELLUM_CUDA_I8_R=$V; done; done
cat $O/b1.txt
