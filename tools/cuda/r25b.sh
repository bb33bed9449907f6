#!/usr/bin/env bash
# Round 25, call 2: the L2 prefetch issued after its GEMV has finished (the wait first), graphs only.
# Batch-1 decode of llama3-8b Q4_K_M / BF16 / Q8_0, prefetch off and on (budget, depth), alternating;
# one line a run into $O/b1.txt.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M BF16 Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
export VELLUM_CUDA_L2_PREFETCH_MIB=16
{ python3 $D/stories_greedy.py $V $T/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1
  timeout 60 $C --graphs $T/s.gguf 2>&1 | tail -1
  $V gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1
  timeout 120 $C --compare /tmp/q.gguf --graphs /tmp/q.gguf 2>$O/compare.log | grep -E "greedy|graphs vs|checks,"; } > $O/b1.txt
unset VELLUM_CUDA_L2_PREFETCH_MIB
wait
b1() {  # LABEL TYPE ENV...: batch-1 decode, eager and graphs + PDL, with the prefetch's stats
  local L=$1 TY=$2; shift 2
  G=/tmp/b1-$TY-$L.log
  env "$@" timeout 100 $C --only-bench --batch1-only --model /tmp/l8b-$TY.gguf > $G 2>/dev/null
  echo "$TY $L: eager $(grep 'decode batch 1' $G | grep 'graphs off' | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') graphs $(grep 'decode batch 1' $G | grep 'graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') | $(grep 'L2 prefetch' $G | sed -E 's/.*prefetch: //' | cut -c1-140)" >> $O/b1.txt
}
P=VELLUM_CUDA_L2_PREFETCH_MIB; DE=VELLUM_CUDA_L2_PREFETCH_DEPTH
for r in 1 2; do
  b1 off Q4_K_M $P=0
  b1 16M-d1 Q4_K_M $P=16 $DE=1
  b1 16M-d2 Q4_K_M $P=16 $DE=2
  b1 8M-d1 Q4_K_M $P=8 $DE=1
  b1 32M-d1 Q4_K_M $P=32 $DE=1
done
b1 off BF16 $P=0
b1 16M-d1 BF16 $P=16 $DE=1
b1 32M-d1 BF16 $P=32 $DE=1
b1 off Q8_0 $P=0
b1 16M-d1 Q8_0 $P=16 $DE=1
b1 32M-d1 Q8_0 $P=32 $DE=1
cat $O/b1.txt
