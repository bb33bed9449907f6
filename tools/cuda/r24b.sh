#!/usr/bin/env bash
# Round 24, call 2: the deterministic mode's attention on the tensor-core kernel in spans (every row, decode
# included). Stages (STAGES, default all): det (--det-only: the matmul checks and the new attention checks),
# verify (run5.sh's checks + invariance, as final_common.sh), proof (proof, invariance and deterministic graphs vs
# eager on llama3.2-1b BF16 / F16), bench (quick bench of llama3-8b BF16, deterministic then default), prof (ncu
# kernel times of a deterministic 512-token BF16 prefill).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
S=${STAGES:-det verify proof bench prof}
has() { [[ " $S " == *" $1 "* ]]; }
nvidia-smi -L
if has bench || has prof; then ([ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1) & fi
if has det; then
  timeout 200 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"
  grep -E "FAIL" $O/det_checks.txt | head -8 | cut -c1-220
  grep -E "deterministic attention" $O/det_checks.txt | cut -c1-220
fi
if has verify; then
  SYNTH_TYPES=" " final_checks
  cat $O/final.txt
  grep -E "deterministic attention" $O/check_table.txt | cut -c1-220
fi
if has proof; then det_proofs BF16 F16; fi
wait
if has bench; then
  for M in --deterministic ""; do
    G=$O/bench$M.log
    VELLUM_BENCH_QUICK=1 timeout 240 $C --only-bench --skip-op-bench $M --model /tmp/l8b-BF16.gguf > $G 2>&1
    echo "BF16 ${M:-default} (exit $?): b1 $(grep 'decode batch 1' $G | grep '\[graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | sort -u | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | 8k/32k $(grep -E '^decode 1 seq x (8|32)k' $G | sed -E 's/.*, ([0-9.]+) tok\/s/\1/' | sort -u | tr '\n' ' ')| $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/' | sort -u | tr '\n' ' ')"
  done
fi
if has prof; then
  for P in 512 2048; do
    VELLUM_PROFILE_PREFILL=$P timeout 200 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
      $C --deterministic --profile /tmp/l8b-BF16.gguf > $O/prof-$P.csv 2> $O/prof-$P.err
    echo "== prefill $P BF16 deterministic (ncu exit $?)"
    python3 $D/ncu_kernels.py $O/prof-$P.csv
  done
fi
