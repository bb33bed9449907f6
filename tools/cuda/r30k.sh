#!/usr/bin/env bash
# Round 30, calls 11-13 (11 without the chmod: the traced binary did not start; 12 grouped stamps by slot
# order, which interleaves; 13 by %gridid): the decode chain of one batch-1 step, kernel by kernel (vellum_cuda_check
# --chain-trace from a -DVELLUM_CHAIN_TRACE=ON build, carried as vellum_cuda_check_trace.gz):
# llama3-8b Q4_K_M and Q8_0, ~200 positions, graphs + PDL. Full tables under $OUT; the
# product binary's batch-1 figure beside, for the trace's own cost.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_trace.gz
chmod +x $D/vellum_cuda_check_trace
source $D/final_common.sh
for T in Q4_K_M Q8_0; do [ -f /tmp/l8b-$T.gguf ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
for T in Q4_K_M Q8_0; do
  timeout 200 $D/vellum_cuda_check_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T.md 2> $O/trace-$T.log
  echo "$T: exit $? $(grep 'chain trace' $O/trace-$T.log $O/trace-$T.md | head -1)"
done
[ -n "$TRACE_B1" ] && { C0=$C; C=$D/vellum_cuda_check_trace; b1 traced-build Q4_K_M; C=$C0; cat $O/b1.txt; }
