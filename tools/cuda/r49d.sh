#!/usr/bin/env bash
# Round 49, call 4: the one-row attention with V through shared memory (3 blocks an SM instead of 2;
# VELLUM_CUDA_ROPE_ATTN_VSMEM, default 1) and one-row graphs padded to multiples of 256 positions
# (VELLUM_CUDA_ONE_ROW_PAD=256, a knob). Checks: the clusters the device holds at once (--attn-clusters),
# --attn-only (the fused kernel vs f64 at 1–1 024 positions), --graphs on llama3.2-1b Q4_K_M, greedy
# text after a ~600-token prompt with V in shared memory vs registers (and padded) — identical; then
# llama3-8b Q4_K_M / Q8_0 batch 1 after 16, 512 and 800 tokens, and a chain trace after 512.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vellum_cuda_check_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 30 $C --attn-clusters 2>&1 | grep "one-row" >> $S
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
P="$(for i in $(seq 1 55); do printf 'the quick brown fox jumps over the lazy dog again and '; done)"
g() { local L=$1; shift; env "$@" timeout 60 $V run -m /tmp/p4.gguf --device cuda -p "$P" -n 200 --temp 0 > $O/run-$L.txt 2> $O/run-$L.log; }
g vsmem; g regs VELLUM_CUDA_ROPE_ATTN_VSMEM=0; g pad VELLUM_CUDA_ONE_ROW_PAD=256; g unfused VELLUM_CUDA_ROPE_ATTN=0
echo "greedy text after a long prompt ($(grep -o 'prompt: [0-9]* tokens' $O/run-vsmem.log)), V in shared memory vs registers: $(cmp -s $O/run-vsmem.txt $O/run-regs.txt && echo identical || echo DIFFER); padded to 256: $(cmp -s $O/run-vsmem.txt $O/run-pad.txt && echo identical || echo DIFFER); unfused: $(cmp -s $O/run-vsmem.txt $O/run-unfused.txt && echo identical || echo differs) ($(wc -c < $O/run-vsmem.txt) bytes)" >> $S
wait
echo "[${SECONDS}s] models ready" >> $S
for T in Q4_K_M Q8_0; do
  for c in 512 800 16; do
    [ $SECONDS -lt 470 ] || break 2
    b1 ctx$c-vsmem $T VELLUM_BENCH_B1_CTX=$c
    b1 ctx$c-regs $T VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_ROPE_ATTN_VSMEM=0
    [ $c = 16 ] || b1 ctx$c-vsmem-pad256 $T VELLUM_BENCH_B1_CTX=$c VELLUM_CUDA_ONE_ROW_PAD=256
  done
done
echo "[${SECONDS}s] b1 done" >> $S
mkdir -p $O/t
if [ $SECONDS -lt 540 ]; then
  VELLUM_TRACE_CTX=512 timeout 40 $D/vellum_cuda_check_trace --chain-trace /tmp/l8b-Q4_K_M.gguf > $O/t/trace-Q4_K_M-ctx512-vsmem.md 2>/dev/null
  python3 $D/chain_summary.py $O/t/trace-Q4_K_M-ctx512-vsmem.md --attention-grid 256 --timeline >> $S 2>&1
fi
tar czf $O/more.tgz -C $O t attn.txt graphs.txt && rm -rf $O/t $O/attn.txt $O/graphs.txt $O/run-*
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
