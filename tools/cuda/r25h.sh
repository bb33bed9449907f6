#!/usr/bin/env bash
# Round 25, call 8: model prefill (llama3-8b BF16 and Q4_K_M, 512 / 2 048 tokens, the default path twice a
# run) with round 24's attention (vellum_cuda_check_base: commit 4709519's attention.cu) and the final one,
# alternating, plus prefill attention alone, on one machine.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_base.gz
source $D/final_common.sh
B=$D/vellum_cuda_check_base
nvidia-smi -L
(for T in BF16 Q4_K_M; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
S=$O/summary.txt
pa() {  # LABEL BINARY
  timeout 120 $2 --prefill-attn-only > /tmp/pa-$1.txt 2>&1
  echo "$1: $(grep "prefill attention" /tmp/pa-$1.txt | sed -E "s/^prefill attention ([0-9]+) tokens per layer \(32q\/8kv x128, ([A-Z0-9]+) KV\): tensor cores ([0-9.]+) ms \(([0-9]+) TFLOP\/s\).*/\2 \1 \3 ms (\4)/" | tr '\n' ';')" >> $S
}
pa base $B; pa new $C
wait
mp() {  # LABEL BINARY TYPE: model prefill 512 / 2 048, the default path twice each
  G=/tmp/prefill-$1-$3.log
  VELLUM_BENCH_QUICK=1 timeout 150 $2 --only-bench --skip-op-bench --prefill-only --model /tmp/l8b-$3.gguf > $G 2>&1
  echo "$3 $1: $(grep -E 'GEMM 8192|prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/; s/.*GEMM 8192.*: ([0-9.]+) TFLOP.*/peak \1/' | tr '\n' ' ')" >> $S
}
for TY in BF16 Q4_K_M; do mp base $B $TY; mp new $C $TY; mp base $B $TY; mp new $C $TY; done
cat $S
