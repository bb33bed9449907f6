#!/usr/bin/env bash
# Round 17 final call: the committed binary's checks (run5.sh: every op vs the CPU with the one-row
# long-kernel steps, stories260K greedy, graphs vs eager with a 1 100-position sequence on the long
# kernel, CPU vs GPU greedy; the deterministic mode's batch invariance), then llama3-8b batch 1 at
# 1k-32k context in a decode graph, the long kernel on (default) and off (VELLUM_CUDA_ATTN_LONG=0),
# alternating, and the quick bench (batch 1, aggregate decode at 1k, prefill) both ways. Run next to
# the stripped vellum, vellum_cuda_check, lib/, fixtures/, run5.sh and stories_greedy.py.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
(for T in Q4_K_M BF16; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
timeout 120 $C --invariance /tmp/q.gguf 2>$O/inv.log | grep -E "invarian|checks," > $O/inv.txt
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-240;
  cat $O/inv.txt; } > $O/final.txt
wait
long() {  # label type env...
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --only-bench --long-ctx-only --model /tmp/l8b-$T.gguf 2>$O/long-$T-$L.log >/dev/null
  echo "$T $L: $(grep -E 'decode batch 1' $O/long-$T-$L.log | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*/b1 \1/') $(grep 'decode 1 seq x' $O/long-$T-$L.log | sed -E 's/decode 1 seq x ([0-9]+k).*: ([0-9.]+) ms\/token.*/\1 \2/' | tr '\n' ' ')" >> $O/long.txt
}
q() {  # label, type, env...
  local L=$1 T=$2; shift 2
  G=$O/quick-$T-$L.log
  env "$@" VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf 2>$G >/dev/null
  echo "$T $L: b1 $(grep 'decode batch 1' $G | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | tr '\n' ' ') | $(grep -E 'prefill (512|2048) tokens \[default' $G | sed -E 's/.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1 (\2%)/' | tr '\n' ' ')" >> $O/quick.txt
}
for i in 1 2; do long on Q4_K_M X=1; long off Q4_K_M VELLUM_CUDA_ATTN_LONG=0; done
long on BF16 X=1; long off BF16 VELLUM_CUDA_ATTN_LONG=0
q on Q4_K_M X=1; q off Q4_K_M VELLUM_CUDA_ATTN_LONG=0
cat $O/final.txt $O/long.txt $O/quick.txt
