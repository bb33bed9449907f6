#!/usr/bin/env bash
# Round 18 final call: the committed binary's checks (final_common.sh: every op vs the CPU with the
# new top_k_rows checks, stories260K greedy, graphs vs eager, CPU vs GPU greedy, batch invariance),
# then llama3-8b Q4_K_M: decode steps of 1-256 sequences with greedy rows, every row's logits
# copied to the host, and the top-40 candidates found on the GPU (graphs on; vellum_cuda_check's
# quick bench with VELLUM_BENCH_SAMPLED); e2e18.sh measures the engine end to end. Run next to the
# stripped vellum, vellum_cuda_check, lib/, fixtures/, run5.sh, stories_greedy.py and final_common.sh.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
final_checks
G=$O/sampled-Q4_K_M.log
VELLUM_BENCH_QUICK=1 VELLUM_BENCH_SAMPLED=1 timeout 240 $C --only-bench --skip-op-bench --model /tmp/l8b-Q4_K_M.gguf 2>$G >/dev/null
{ echo "decode steps, llama3-8b Q4_K_M, 1k context, graphs on, tok/s: greedy | all logits to the host | top-40 on the GPU"
  for B in 1 2 4 8 32 64 128 256; do
    echo "$B seqs: $(grep -E "^decode $B seqs .*graphs on" $G | sed -E 's/.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\2/' | tr '\n' ' ')"
  done; } > $O/sampled.txt
cat $O/final.txt $O/sampled.txt
