#!/usr/bin/env bash
# Round 21: rows drawn on the device with min-p and top-p (draw_rows' narrowing passes). The
# sampling checks (argmax, top-k, draws against the CPU backend), the draw kernels alone,
# early launch vs none with cut draws, `vellum proof` of rows drawn on the GPU against whole rows
# copied back (stories260K and llama3-8b's shape, temperature 1, top-p 0.9 / min-p 0.05, graphs on),
# then the end-to-end bench at 1 / 64 / 256 sequences with top-p 0.95 and min-p 0.05 (drawn on the
# device, and --whole-logits: copied back and sampled on the host) and with the OpenAI defaults.
# Run next to the stripped vellum, vellum_cuda_check, lib/, fixtures/ (stories260K, the
# deepseek-llm vocabulary) and final_common.sh; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
M=/tmp/l8b-dsv.gguf
($V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth.log 2>&1) &
timeout 200 $C --sampling-only 2>$O/sampling.log > $O/sampling.txt; echo "sampling checks exit $?"
grep -E "draw_rows|FAIL" $O/sampling.txt | cut -c1-220; tail -1 $O/sampling.txt
for shape in "1 102400" "64 102400" "256 102400" "1 151936"; do timeout 60 $C --draw-probe $shape 2>&1 | tail -1; done
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
printf '%s\n' "Once upon a time" "The little dog" "Lily and Tom went to the park" "One day, a big bird" "The sun was" "Mom said" "Tim had a red ball" "In the forest" > $T/p.txt
CUT="--temp 1 --top-k 0 --top-p 0.9 --min-p 0.05"
proof stories-cut $T/s.gguf -n 200 $CUT --a "" --b "--whole-logits"
proof stories-topp07 $T/s.gguf -n 200 --temp 0.7 --top-k 0 --top-p 0.7 --min-p 0 -s 99 --a "" --b "--whole-logits"
wait
timeout 200 $C --early $T/s.gguf --early $M 2>$O/early.log > $O/early.txt; echo "early exit $?"; grep -E "early launch|FAIL" $O/early.txt | cut -c1-240
proof l8b-cut $M -n 64 $CUT --a "" --b "--whole-logits"
proof l8b-minp $M -n 64 --temp 1 --top-k 0 --top-p 1 --min-p 0.05 --a "" --b "--whole-logits"
proof l8b-cut-seq1 $M -n 32 $CUT --a "--max-num-seqs 1" --b "--whole-logits"
e2e cut-device -p 128 -n 256 -b 1,64,256 --temp 1 --top-k 0 --top-p 0.95 --min-p 0.05
e2e cut-host -p 128 -n 256 -b 1,64 --temp 1 --top-k 0 --top-p 0.95 --min-p 0.05 --whole-logits
e2e openai -p 128 -n 256 -b 1,64,256 --temp 1 --top-k 0 --top-p 1 --min-p 0
