#!/usr/bin/env bash
# Round 29, call 11: one-row decode graphs padded to 256 positions (not 1 024), so that a short row's
# one-row attention launch is 2 slices of blocks, not 8. --attn-only; graphs vs eager on llama3.2-1b
# Q4_K_M and Q8_0 and stories260K greedy; batch-1 decode of llama3-8b Q4_K_M (both changes, the pair
# launch only, neither) and Q8_0 (with and without the one-row kernel), alternating; the quick bench.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
timeout 200 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)" >> $S
grep FAIL $O/attn-check.txt | head -8 | cut -c1-220 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T llama3.2-1b: $(timeout 150 $C --graphs /tmp/p-$T.gguf 2>/dev/null | grep -E 'graphs vs eager' | head -1 | cut -c1-230)" >> $S
done
TT=$(mktemp -d); $V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $TT/s.gguf > /dev/null
python3 $D/stories_greedy.py $V $TT/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1 >> $S
wait
for R in 1 2; do
  b1 default$R Q4_K_M
  b1 pair-only$R Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
  b1 neither$R Q4_K_M VELLUM_CUDA_GEMV_PAIR=0 VELLUM_CUDA_ROPE_ATTN=0
  b1 default$R Q8_0
  b1 norope$R Q8_0 VELLUM_CUDA_ROPE_ATTN=0
done
cat $O/b1.txt >> $S
q default Q4_K_M
q pair-only Q4_K_M VELLUM_CUDA_ROPE_ATTN=0
cat $O/quick.txt >> $S
cat $S
