#!/usr/bin/env bash
# Round 22, call 12: the deterministic quick bench of llama3-8b Q4_K_M on the final binary (rows_mma split, thresholds by type).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
[ -f /tmp/l8b-Q4_K_M.gguf ] || $V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
G=$O/detbench.log
VELLUM_BENCH_QUICK=1 timeout 170 $C --only-bench --skip-op-bench --deterministic --model /tmp/l8b-Q4_K_M.gguf > $G 2>&1
echo "Q4_K_M det (exit $?): $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.*/\1: \2/' | sort -u | tr '\n' ' ')"
