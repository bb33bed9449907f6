#!/usr/bin/env bash
# Round 25, call 7: the final tensor-core attention (ex2.approx, the scale folded into an fma, the
# rescale skipped when a warp's maxima held) against call 6's binary (vellum_cuda_check_prev, commit
# bb07043): the same checks as r25f.sh, prefill attention at 512 / 2 048 / 8 192 tokens, and model
# prefill of llama3-8b BF16 and Q4_K_M, both binaries in one call.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_prev.gz
source $D/final_common.sh
B=$D/vellum_cuda_check_prev
nvidia-smi -L
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
timeout 200 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)" >> $S
grep FAIL $O/attn-check.txt | head -5 >> $S
timeout 200 $C --det-only > $O/det-check.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 $O/det-check.txt)" >> $S
T=$(mktemp -d)
$V gguf convert-llama2c $D/fixtures/stories260K.bin $D/fixtures/tok512.bin $T/s.gguf > /dev/null
python3 $D/stories_greedy.py $V $T/s.gguf $D/fixtures/greedy-reference.json 2>&1 | tail -1 >> $S
timeout 60 $C --graphs $T/s.gguf 2>&1 | tail -1 >> $S
$V gguf synth --preset qwen2.5-0.5b --type F16 -o /tmp/q.gguf > /dev/null 2>&1
timeout 150 $C --compare /tmp/q.gguf --graphs /tmp/q.gguf 2>$O/compare.log | grep -E "greedy|graphs vs|checks," | cut -c1-200 >> $S
det_proofs BF16 >> $S 2>&1
pa() {  # LABEL BINARY
  timeout 120 $2 --prefill-attn-only > /tmp/pa-$1.txt 2>&1
  echo "$1: $(grep "prefill attention" /tmp/pa-$1.txt | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores ([0-9.]+) ms \(([0-9]+) TFLOP\/s\).*/\2 \1 \3 ms (\4)/" | tr '\n' ';')" >> $S
}
pa prev $B; pa new $C; pa prev $B; pa new $C
wait
mp() {  # LABEL BINARY TYPE: model prefill 512 / 2 048, the default path twice each
  G=$O/prefill-$1-$3.log
  VELLUM_BENCH_QUICK=1 timeout 150 $2 --only-bench --skip-op-bench --prefill-only --model /tmp/l8b-$3.gguf > $G 2>&1
  echo "$3 $1: $(grep -E 'GEMM 8192|prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/; s/.*GEMM 8192.*: ([0-9.]+) TFLOP.*/peak \1/' | tr '\n' ' ')" >> $S
}
for TY in BF16 Q4_K_M; do mp prev $B $TY; mp new $C $TY; done
cat $S
