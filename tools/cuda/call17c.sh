#!/usr/bin/env bash
# Round 17, call 3: the checks again (graphs vs eager now with a 1 100-position sequence on the long
# kernel), then llama3-8b batch 1 at 1k-32k context in a decode graph: the long kernel off, its
# default (variant 4 with the merge split over 8 warps, runs by the SM count), at every context
# (LONG_MIN=0), with 8 and 12 runs; BF16 off / default.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
(for T in Q4_K_M BF16; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-240; } > $O/summary.txt
timeout 150 $C --attn-bench 2>/dev/null | grep -E "x 1 seqs" | cut -c1-700 > $O/attn.txt
wait
run() {  # label type env...
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --only-bench --long-ctx-only --model /tmp/l8b-$T.gguf 2>$O/long-$T-$L.log >/dev/null
  echo "$T $L: $(grep -E 'decode batch 1' $O/long-$T-$L.log | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*/b1 \1/') $(grep 'decode 1 seq x' $O/long-$T-$L.log | sed -E 's/decode 1 seq x ([0-9]+k).*: ([0-9.]+) ms\/token.*/\1 \2/' | tr '\n' ' ')" >> $O/long.txt
}
run off Q4_K_M VELLUM_CUDA_ATTN_LONG=0
run v4 Q4_K_M X=1
run v4min0 Q4_K_M VELLUM_CUDA_ATTN_LONG_MIN=0
run v4r8 Q4_K_M VELLUM_CUDA_ATTN_LONG_RUNS=8
run v4r12 Q4_K_M VELLUM_CUDA_ATTN_LONG_RUNS=12
run off2 Q4_K_M VELLUM_CUDA_ATTN_LONG=0
run v4b Q4_K_M X=1
run off BF16 VELLUM_CUDA_ATTN_LONG=0
run v4 BF16 X=1
cat $O/summary.txt $O/attn.txt $O/long.txt
