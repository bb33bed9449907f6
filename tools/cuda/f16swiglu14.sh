#!/usr/bin/env bash
# Round 14: F16 weights' many-row SwiGLU on f16 GEMMs (call 11), the norms' f16 copy (call 12): checks, then llama3-8b F16 quick bench against
# the previous binary (vellum_cuda_check.prev.xz), alternating, and BF16 once each (unchanged path).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
xz -dc $D/vellum_cuda_check.prev.xz > /tmp/check.prev && chmod +x /tmp/check.prev
("$D/vellum" gguf synth --preset llama3-8b --type F16 -o /tmp/l8b-F16.gguf > /dev/null 2>&1) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
timeout 120 $C --invariance /tmp/q.gguf > $O/inv.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "matmul_swiglu F16|add_rms_norm .*copy" $O/check_table.txt | cut -c1-170; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; grep -E "deterministic model" $O/inv.txt | cut -c1-200 | sort -u; } > $O/final.txt
wait
q() {  # binary label type run
  L=$O/quick-$3-$2-$4.log
  VELLUM_BENCH_QUICK=1 timeout 200 $1 --only-bench --skip-op-bench --model /tmp/l8b-$3.gguf 2>$L >/dev/null
  echo "$3 $2: $(grep -E '^decode [0-9]+ seqs' $L | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | b1 $(grep 'decode batch 1' $L | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*-> ([0-9]+)%/\1 (\2%)/') | $(grep -E 'prefill (512|2048) tokens \[default' $L | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
}
for i in 1 2; do q /tmp/check.prev prev F16 $i; q $C new F16 $i; done
cat $O/final.txt; cat $O/quick.txt
