#!/usr/bin/env bash
# Round 43, call 7: the row norm with Q/K/V biases (qwen2.5-0.5b Q8_0, synthetic): graphs vs eager and
# row norm vs norm kernels (--graphs).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
$V gguf synth --preset qwen2.5-0.5b --type Q8_0 -o /tmp/qw.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/qw.gguf 2>&1 | grep -E "graphs vs|row norm vs|layer kernel vs|FAIL|checks," | grep -v " err " | sed -E 's/ +/ /g' | cut -c1-230
