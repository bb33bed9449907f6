#!/usr/bin/env bash
# Round 40, call 8 (main's final binary, after the launch switch's cleanup): stories260K greedy,
# graphs vs eager, CPU vs GPU greedy on qwen2.5-0.5b, and a Q8_0 512 / 2 048 prefill.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1 &
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
python3 $D/stories_greedy.py $V $T/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1 >> $S
timeout 60 $C --graphs $T/s.gguf 2>&1 | tail -1 >> $S
$V gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1
timeout 100 $C --compare /tmp/q.gguf --graphs /tmp/q.gguf 2>/dev/null | grep -E "greedy|graphs vs|checks," | cut -c1-200 >> $S
wait
model_prefill final $C Q8_0 >> $S
echo "[${SECONDS}s] done" >> $S
cat $S
