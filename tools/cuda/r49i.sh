#!/usr/bin/env bash
# Round 49, call 9: past 1 024 positions, round 17's long kernel doing the step's RoPE and newest
# K/V store itself (launch_attention_long_rope; VELLUM_CUDA_LONG_ROPE=0 keeps the rope_store_kv
# launch). Checks: --attn-only (2 001 positions: the long kernel with RoPE bit for bit against
# rope_store_kv + the long kernel, the newest K/V too), --graphs on llama3.2-1b Q4_K_M (1 row at
# 1 100+), greedy text after a ~1 200-token prompt with it on and off; then llama3-8b batch 1 after
# 1 100, 2 048 and 4 096 tokens, on against off.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
grep -E "long kernel with RoPE" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | sort -u | head -6 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
P="$(for i in $(seq 1 110); do printf 'the quick brown fox jumps over the lazy dog again and '; done)"
g() { local L=$1; shift; env "$@" timeout 60 $V run -m /tmp/p4.gguf --device cuda -p "$P" -n 200 --temp 0 > $O/run-$L.txt 2> $O/run-$L.log; }
g on; g off VELLUM_CUDA_LONG_ROPE=0
echo "greedy text after a long prompt ($(grep -o 'prompt: [0-9]* tokens' $O/run-on.log)), long kernel with RoPE on vs off: $(cmp -s $O/run-on.txt $O/run-off.txt && echo identical || echo DIFFER) ($(wc -c < $O/run-on.txt) bytes)" >> $S
wait
echo "[${SECONDS}s] models ready" >> $S
for i in 1 2; do
  for c in 2048 4096 1100; do
    [ $SECONDS -lt 470 ] || break 2
    b1 ctx$c-on Q4_K_M VELLUM_BENCH_B1_CTX=$c
    b1 ctx$c-off Q4_K_M VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_LONG_ROPE=0
  done
  [ $SECONDS -lt 470 ] || break
  b1 ctx2048-on Q8_0 VELLUM_BENCH_B1_CTX=2048
  b1 ctx2048-off Q8_0 VELLUM_BENCH_B1_CTX=2048 VELLUM_CUDA_LONG_ROPE=0
done
echo "[${SECONDS}s] b1 done" >> $S
tar czf $O/logs.tgz -C $O attn.txt graphs.txt && rm -f $O/attn.txt $O/graphs.txt $O/run-*
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
