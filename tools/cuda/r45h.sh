#!/usr/bin/env bash
# Round 45, call 8: the decode chain of one batch-1 step on main after round 43's row norm (round
# 40's trace predates it): vellum_cuda_check --chain-trace from a -DVELLUM_CHAIN_TRACE=ON build
# (carried as vcc_trace.gz), llama3-8b Q4_K_M and Q8_0, ~200 positions, graphs + PDL. Full tables
# under $OUT (trace-TYPE.md).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait)
for T in Q4_K_M Q8_0; do
  timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T.md 2> /tmp/trace-$T.log
  echo "$T: exit $? $(grep -c '^| [0-9]' $O/trace-$T.md) launches; $(grep -i 'tok/s\|step' /tmp/trace-$T.log | tail -1 | cut -c1-160)"
done
