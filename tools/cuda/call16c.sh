#!/usr/bin/env bash
# Round 16, call 3: the norm kernel's block size (VELLUM_CUDA_NORM_THREADS). The checks (run5.sh) and
# the deterministic mode's batch invariance with 1024 threads, then llama3-8b batch-1 decode with
# 256 (round 15), 1024 and 512 threads, alternating, the same binary.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
(for T in Q4_K_M BF16 Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
export VELLUM_CUDA_NORM_THREADS=${NT:-1024}
bash $D/run5.sh checks > $O/run5.txt 2>&1
timeout 120 $C --invariance /tmp/q.gguf 2>$O/inv.log | grep -E "invarian|checks," > $O/inv.txt
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "add_rms_norm|rms_norm" $O/check_table.txt | head -12 | cut -c1-150;
  grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-200; cat $O/inv.txt; } > $O/final.txt
unset VELLUM_CUDA_NORM_THREADS
wait
b1() {  # label, type, env...
  local L=$1 T=$2; shift 2
  env "$@" X=1 timeout 100 $C --only-bench --batch1-only --model /tmp/l8b-$T.gguf 2>$O/b1-$T-$L.log >/dev/null
  echo "$T $L: $(grep 'decode batch 1' $O/b1-$T-$L.log | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')" >> $O/b1.txt
}
for T in Q4_K_M BF16 Q8_0; do
  for N in 256 1024 512 256 1024 512; do b1 nt$N $T VELLUM_CUDA_NORM_THREADS=$N; done
done
cat $O/final.txt $O/b1.txt
