#!/usr/bin/env bash
# Round 21, on the committed binary. final_common.sh's checks (every op vs the CPU, the draw and
# logit-edit checks among them; stories260K greedy; graphs vs eager; CPU vs GPU greedy; batch
# invariance) while llama3-8b Q4_K_M and Q8_0 (32 000 tokens) and its Q4_K_M with deepseek-llm's
# 102 400-token vocabulary are synthesized; early launch vs none (edited top-k rows and cut draws
# among the steps); `vellum proof` of rows reduced on the GPU (penalties, biases as edits; min-p /
# top-p draws) against whole rows copied back; the end-to-end bench with penalties, drawn on the
# device and copied back, and with the OpenAI defaults (delivery at 256 sequences); batch 1 of Q4_K_M
# and Q8_0. Run next to the stripped vellum,
# vellum_cuda_check, lib/, fixtures/ (stories260K, the deepseek-llm vocabulary), run5.sh,
# stories_greedy.py and final_common.sh; logs go to $OUT. `final21.sh checks` (checks, early launch,
# proofs), then `final21.sh bench` (end to end, batch 1): each fits one 10-minute call and
# synthesizes what it needs that is not there yet.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
V=$D/vellum; M=/tmp/l8b-dsv.gguf
[ -f $M ] || ($V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1) &
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
printf '%s\n' "Once upon a time" "The little dog" "Lily and Tom went to the park" "One day, a big bird" "The sun was" "Mom said" "Tim had a red ball" "In the forest" > $T/p.txt
if [ "${1:-checks}" = checks ]; then
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
wait
timeout 200 $C --early $T/s.gguf --early $M 2>$O/early.log > $O/early.txt
{ cat $O/final.txt; grep -E "draw_rows|edit_logits" $O/check_table.txt | cut -c1-200; grep -E "early launch|FAIL" $O/early.txt | cut -c1-240; } > $O/final21.txt
cat $O/final21.txt
PEN="--repeat-penalty 1.3 --presence-penalty 0.5 --frequency-penalty 0.2"
proof stories-pen-cut $T/s.gguf -n 200 --temp 1 --top-k 0 --top-p 0.9 --min-p 0.05 $PEN --a "" --b "--whole-logits"
proof stories-pen-greedy $T/s.gguf -n 200 --temp 0 --repeat-penalty 1.5 --a "" --b "--whole-logits"
proof stories-pen-topk $T/s.gguf -n 200 --temp 0.8 --top-k 20 --frequency-penalty 0.7 --a "" --b "--whole-logits"
proof l8b-pen-cut $M -n 64 --temp 1 --top-k 0 --top-p 0.9 --min-p 0.05 $PEN --a "" --b "--whole-logits"
proof l8b-pen-greedy $M -n 64 --temp 0 --repeat-penalty 1.5 --a "" --b "--whole-logits"
proof l8b-pen-topk $M -n 64 --temp 0.8 --top-k 40 --frequency-penalty 0.7 --a "" --b "--whole-logits"
exit 0
fi
for TT in Q4_K_M Q8_0; do [ -f /tmp/l8b-$TT.gguf ] || $V gguf synth --preset llama3-8b --type $TT -o /tmp/l8b-$TT.gguf > /dev/null 2>&1 & done
wait
CUT="--temp 1 --top-k 0 --top-p 0.95 --min-p 0.05 --repeat-penalty 1.1 --presence-penalty 0.3 --frequency-penalty 0.3"
e2e pen-device -p 128 -n 256 -b 1,64,256 $CUT
e2e pen-host -p 128 -n 256 -b 1,64 $CUT --whole-logits
e2e openai -p 128 -n 256 -b 1,64,256 --temp 1 --top-k 0 --top-p 1 --min-p 0
b1() {  # TYPE LABEL ENV...
  local TT=$1 L=$2; shift 2
  env "$@" timeout 100 $C --only-bench --batch1-only --model /tmp/l8b-$TT.gguf 2>"$O/b1-$TT-$L.log" >/dev/null
  echo "$TT $L: $(grep 'decode batch 1' $O/b1-$TT-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\1 \2 (\3%)/' | tr '\n' ' ')"
}
for rep in $(seq ${REPS:-1}); do for TT in Q4_K_M Q8_0; do b1 $TT early-on X=1; b1 $TT early-off VELLUM_CUDA_EARLY_LAUNCH=0; done; done
