#!/usr/bin/env bash
# Round 20 final calls, on the committed binary. `final20.sh checks`: final_common.sh's checks (every
# op vs the CPU, the draw_rows checks among them; stories260K greedy; graphs vs eager; CPU vs GPU
# greedy; batch invariance) while llama3-8b Q4_K_M and BF16 are synthesized, then early launch vs
# none (--early) and graphs vs eager on llama3-8b Q4_K_M. `final20.sh bench`: the quick bench of
# llama3-8b Q4_K_M (batch 1, aggregate decode at 1k, prefill) and batch 1 of Q4_K_M and BF16 with
# early launch on and off. Run next to the stripped vellum, vellum_cuda_check, lib/, fixtures/,
# run5.sh, stories_greedy.py and final_common.sh.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
if [ "${1:-checks}" = checks ]; then
  final_checks
  timeout 200 $C --early /tmp/q.gguf --early /tmp/l8b-Q4_K_M.gguf --graphs /tmp/l8b-Q4_K_M.gguf 2>$O/early.log > $O/early.txt
  { cat $O/final.txt; grep -E "early launch|graphs vs|layer kernel|checks,|FAIL" $O/early.txt | cut -c1-240; } > $O/final20.txt
  cat $O/final20.txt
else
  q early-on Q4_K_M X=1
  cat $O/quick.txt
  b1() {  # TYPE LABEL ENV...
    local T=$1 L=$2; shift 2
    env "$@" timeout 100 $C --only-bench --batch1-only --model /tmp/l8b-$T.gguf 2>"$O/b1-$T-$L.log" >/dev/null
    echo "$T $L: $(grep 'decode batch 1' $O/b1-$T-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\1 \2 (\3%)/' | tr '\n' ' ')"
  }
  for T in ${B1_TYPES:-Q4_K_M BF16}; do for rep in $(seq ${REPS:-2}); do b1 $T early-on X=1; b1 $T early-off VELLUM_CUDA_EARLY_LAUNCH=0; done; done
fi
