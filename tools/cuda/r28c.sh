#!/usr/bin/env bash
# Round 28, call 4: where a llama3-8b prefill's GPU time goes: ncu's kernel durations (serialized,
# so the side stream's dequantization no longer overlaps) of one eager prefill of 512 tokens under
# cudaProfilerStart/Stop (vellum_cuda_check --profile with VELLUM_PROFILE_PREFILL), Q4_K_M with the
# register-A kernel on its many-row matmuls (VELLUM_CUDA_DQ_TMA=2) and off, and BF16.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
(for T in BF16; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
S=$O/summary.txt
prof() {  # LABEL TYPE TOKENS ENV...
  local L=$1 TY=$2 TOK=$3; shift 3
  env "$@" VELLUM_PROFILE_PREFILL=$TOK timeout 240 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
    $C --profile /tmp/l8b-$TY.gguf > $O/ncu-$L.csv 2> $O/ncu-$L.log
  echo "== $L ($TY, $TOK tokens, $*): exit $? $(grep -h 'profiled' $O/ncu-$L.csv $O/ncu-$L.log | sed -E 's/.*: //' | head -1)"
  python3 $D/ncu_kernels.py $O/ncu-$L.csv
}
{
prof q512off Q4_K_M 512 VELLUM_CUDA_DQ_TMA=0
prof q512rs Q4_K_M 512 VELLUM_CUDA_DQ_TMA=2
wait
prof b512 BF16 512
} > $S 2>&1
cat $S
