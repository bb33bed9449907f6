#!/usr/bin/env bash
# Round 17, call 2: the one-row long attention kernel. Checks (run5.sh: every op vs the CPU, with
# the one-row steps at 200 / 3 000 / 8 190 / 20 000 past on each long-kernel shape; stories260K
# greedy; graphs vs eager, now with a 400-position sequence on the long kernel; CPU vs GPU greedy),
# the host-timed attention bench, then llama3-8b Q4_K_M batch 1 at 2k-32k context in a decode graph
# with the long kernel off (round 16) and each of its shapes.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
("$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b.gguf > /dev/null 2>&1) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-220;
  grep -E "one-row step at (8190|20000)" $O/check_table.txt | grep "32q" | head -12 | cut -c1-110; } > $O/summary.txt
timeout 150 $C --attn-bench 2>/dev/null | grep -E "copy|x 1 seqs" | cut -c1-600 > $O/attn.txt
wait
for L in 0 1 2 3 4 5; do
  VELLUM_CUDA_ATTN_LONG=$L timeout 200 $C --only-bench --long-ctx-only --model /tmp/l8b.gguf 2>$O/long$L.log >/dev/null
  echo "long $L: $(grep -E 'decode batch 1' $O/long$L.log | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*/b1 \1/') $(grep 'decode 1 seq x' $O/long$L.log | sed -E 's/decode 1 seq x ([0-9]+k).*: ([0-9.]+) ms\/token.*/\1 \2/' | tr '\n' ' ')" >> $O/long.txt
done
cat $O/summary.txt $O/attn.txt $O/long.txt
