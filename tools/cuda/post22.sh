#!/usr/bin/env bash
# Round 22, call 10: the committed binary (butterfly_push) — the deterministic checks, a whole-model invariance check, and the kernel alone.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
timeout 100 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"; grep FAIL $O/det_checks.txt | head -3
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
timeout 120 $C --invariance /tmp/p.gguf > $O/inv.txt 2>&1; echo "invariance Q4_K_M (exit $?): $(grep -E 'deterministic model' $O/inv.txt | head -1 | cut -c1-200)"
VELLUM_ROWS_BENCH_NO_REF=1 VELLUM_ROWS_BENCH_ROWS=512 timeout 60 $C --rows-mma-bench > $O/rows.txt 2>/dev/null; grep -E "^rows_mma" $O/rows.txt | sed -E 's/ vs rows GEMV.*//'
