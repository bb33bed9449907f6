#!/usr/bin/env bash
# Round 13 call 3: llama3-8b Q4_K_M / Q8_0 aggregate decode with dq_mma on 14 336-row weights only (VELLUM_CUDA_DQ_MMA_MIN_N), alternating.
# NOTE: VELLUM_CUDA_DQ_MMA_MIN_N existed only in the build this call measured; on main the default (no VELLUM_CUDA_DQ_MMA) applies the rule it chose.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait
for T in Q4_K_M Q8_0; do
for S in "VELLUM_CUDA_DQ_MMA=0" "VELLUM_CUDA_DQ_MMA=1 VELLUM_CUDA_DQ_MMA_ROWS=33,256 VELLUM_CUDA_DQ_MMA_MIN_N=8192 (a knob of the build measured; main builds the rule in)" "VELLUM_CUDA_DQ_MMA=1 VELLUM_CUDA_DQ_MMA_ROWS=9,256 VELLUM_CUDA_DQ_MMA_MIN_N=8192" "VELLUM_CUDA_DQ_MMA=0"; do
  L="$O/agg-$T-$(echo "$S" | tr -c "A-Za-z0-9\n" _).log"
  env VELLUM_BENCH_QUICK=1 $S timeout 170 "$C" --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf 2>"$L" >/dev/null
  A=$(grep -E '^decode [0-9]+ seqs' "$L" | grep greedy | grep -E 'graphs on\]' | sed -E 's/^decode ([0-9]+) seqs.*\[graphs (o[nf]+)\]: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1=\4/' | tr '\n' ' ')
  P=$(grep -E '^prefill (512|2048) tokens \[default' "$L" | sed -E 's/^prefill ([0-9]+) tokens.*\]: ([0-9]+) tok\/s.*= ([0-9.]+)%.*/\1:\2/' | tr '\n' ' ')
  echo "$T $S | $A | $P"
done; done
