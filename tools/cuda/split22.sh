#!/usr/bin/env bash
# Round 22, call 11: rows_mma split over lane positions (few-block launches): the deterministic checks, invariance, and the kernel alone vs the rows GEMV.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
timeout 100 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"; grep -E "FAIL" $O/det_checks.txt | head -5
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
timeout 100 $C --invariance /tmp/p.gguf > $O/inv.txt 2>&1; echo "invariance (exit $?): $(grep -E 'deterministic model' $O/inv.txt | head -1 | cut -c1-150)"
timeout 120 $C --rows-mma-bench > $O/rows.txt 2>/dev/null; echo "bench exit $?"
grep -E "^rows_mma" $O/rows.txt | grep -E "at (16|32|64|512) rows" | sed -E 's/ \(([0-9]+) GB\/s of weights, / (/' | cut -c1-150
