#!/usr/bin/env bash
# Round 17 final call: the committed binary's checks (run5.sh: every op vs the CPU with the one-row
# long-kernel steps, stories260K greedy, graphs vs eager with a 1 100-position sequence on the long
# kernel, CPU vs GPU greedy; the deterministic mode's batch invariance), then llama3-8b batch 1 at
# 1k-32k context in a decode graph, the long kernel on (default) and off (VELLUM_CUDA_ATTN_LONG=0),
# alternating, and the quick bench (batch 1, aggregate decode at 1k, prefill) both ways. Run next to
# the stripped vellum, vellum_cuda_check, lib/, fixtures/, run5.sh, stories_greedy.py and final_common.sh.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
final_checks
long() {  # label type env...
  local L=$1 T=$2; shift 2
  env "$@" timeout 200 $C --only-bench --long-ctx-only --model /tmp/l8b-$T.gguf 2>$O/long-$T-$L.log >/dev/null
  echo "$T $L: $(grep -E 'decode batch 1' $O/long-$T-$L.log | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*/b1 \1/') $(grep 'decode 1 seq x' $O/long-$T-$L.log | sed -E 's/decode 1 seq x ([0-9]+k).*: ([0-9.]+) ms\/token.*/\1 \2/' | tr '\n' ' ')" >> $O/long.txt
}
for i in 1 2; do long on Q4_K_M X=1; long off Q4_K_M VELLUM_CUDA_ATTN_LONG=0; done
long on BF16 X=1; long off BF16 VELLUM_CUDA_ATTN_LONG=0
q on Q4_K_M X=1; q off Q4_K_M VELLUM_CUDA_ATTN_LONG=0
cat $O/final.txt $O/long.txt $O/quick.txt
