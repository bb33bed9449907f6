#!/usr/bin/env bash
# Round 43, call 3: the consumers' partial sums loaded beside x (new) against call 2's binary (old:
# summed before x's loads), batch 1 of llama3-8b Q4_K_M and Q8_0 alternating; graphs vs eager and
# row norm vs norm kernels of the new binary on llama3.2-1b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vellum_cuda_check_old; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "graphs vs|row norm vs|layer kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
wait
bx() {  # bx LABEL TYPE BINARY ENV...: b1 with another binary
  local L=$1 TY=$2 X=$3; shift 3
  local G=/tmp/b1-$TY-$L.log
  env "$@" timeout 100 $X --only-bench --batch1-only --model /tmp/l8b-$TY.gguf > $G 2>/dev/null
  echo "$TY $L: eager $(grep 'decode batch 1' $G | grep 'graphs off' | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') graphs $(grep 'decode batch 1' $G | grep 'graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/')" >> $O/b1.txt
}
for r in 1 2; do
  bx old Q4_K_M $D/vellum_cuda_check_old; bx new Q4_K_M $C
  bx old Q8_0 $D/vellum_cuda_check_old; bx new Q8_0 $C
done
bx off Q4_K_M $C VELLUM_CUDA_ROW_NORM=0; bx off Q8_0 $C VELLUM_CUDA_ROW_NORM=0
cat $O/b1.txt >> $S
left b1 done
cat $S
