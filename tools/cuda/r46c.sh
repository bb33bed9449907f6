#!/usr/bin/env bash
# Round 46, call 3: where the fused Q/K/V + attention launch loses its time. The decode chain of a
# batch-1 step with it (vellum_cuda_check --chain-trace from a -DVELLUM_CHAIN_TRACE=ON build, carried
# as vcc_trace.gz), llama3-8b Q4_K_M and Q8_0; and batch 1 with it on, off, and cut short
# (VELLUM_CUDA_QKV_ATTN_DBG: 1 leaves right after the wait, 2 after the hand-off, 3 skips the GEMV's
# work after the wait; results wrong), alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait)
for T in Q4_K_M Q8_0; do
  timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T.md 2> /tmp/trace-$T.log
  echo "$T trace: exit $? $(grep -c '^| [0-9]' $O/trace-$T.md) launches" >> $S
  python3 $D/chain_summary.py $O/trace-$T.md >> $S 2>&1
done
left traces done
for i in 1 2; do
  for T in Q4_K_M Q8_0; do
    b1 on $T; b1 off $T VELLUM_CUDA_QKV_ATTN=0; b1 dbg1 $T VELLUM_CUDA_QKV_ATTN_DBG=1; b1 dbg2 $T VELLUM_CUDA_QKV_ATTN_DBG=2
    b1 dbg3 $T VELLUM_CUDA_QKV_ATTN_DBG=3
  done
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
