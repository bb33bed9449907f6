#!/usr/bin/env bash
# Round 23, final call: run5.sh's checks (every op vs the CPU, det16 among them), stories260K, graphs vs eager, CPU vs
# GPU greedy, invariance; the wgmma probe; proofs on BF16 / F16 llama3.2-1b; the quick bench of llama3-8b BF16
# (deterministic and default) and Q4_K_M (deterministic: round 22's rows_mma thresholds, never measured end to end).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
SYNTH_TYPES="BF16 Q4_K_M" final_checks
cat $O/final.txt
$C --wgmma-probe 2>/dev/null | grep "wgmma probe"
det_proofs BF16 F16  # since round 24 with deterministic graphs vs eager too
for c in "BF16 --deterministic" "BF16" "Q4_K_M --deterministic"; do
  set -- $c; G=$O/bench-$1$2.log
  VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench $2 --model /tmp/l8b-$1.gguf > $G 2>&1
  echo "$1 ${2:-default} (exit $?): b1 $(grep 'decode batch 1' $G | grep '\[graphs on\]' | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | sort -u | tr '\n' ' ')| $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -un | tr '\n' ' ') | 8k/32k $(grep -E '^decode 1 seq x (8|32)k' $G | sed -E 's/.*, ([0-9.]+) tok\/s/\1/' | sort -u | tr '\n' ' ')| $(grep -E 'prefill (512|2048) tokens' $G | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/' | sort -u | tr '\n' ' ')"
done
