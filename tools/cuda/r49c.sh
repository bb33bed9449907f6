#!/usr/bin/env bash
# Round 49, call 3: chain traces of one batch-1 step of llama3-8b Q4_K_M and Q8_0 (a
# -DVELLUM_CHAIN_TRACE=ON build of main) at the bench's short context (208 positions) and after a
# 512-token prompt (VELLUM_TRACE_CTX; 720 positions, padded to 768: 6 slices), the fused one-row
# attention and (VELLUM_CUDA_ROPE_ATTN=0) the two ops; then Q4_K_M after 3 800 tokens (the long-row
# kernel). Where does batch 1 lose 8% between 16 and 512 positions (call 2)?
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vellum_cuda_check_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
mkdir -p $O/t  # the traces, returned as one archive (a call returns only so many files)
CT=$D/vellum_cuda_check_trace
nvidia-smi -L > $S
for T in Q4_K_M Q8_0; do [ -s /tmp/l8b-$T.gguf ] || $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
echo "[${SECONDS}s] models ready" >> $S
tr() {  # tr LABEL TYPE GRID ENV...
  local L=$1 TY=$2 G=$3; shift 3
  env "$@" timeout 120 $CT --chain-trace /tmp/l8b-$TY.gguf > $O/t/trace-$TY-$L.md 2> $O/t/trace-$TY-$L.log
  echo "== $TY $L ($*): exit $?" >> $S
  python3 $D/chain_summary.py $O/t/trace-$TY-$L.md --attention-grid $G >> $S 2>&1
}
for T in Q4_K_M Q8_0; do
  tr ctx0 $T 64
  tr ctx512 $T 256 VELLUM_TRACE_CTX=512
  tr ctx512-unfused $T 0 VELLUM_TRACE_CTX=512 VELLUM_CUDA_ROPE_ATTN=0
  tr ctx0-unfused $T 0 VELLUM_CUDA_ROPE_ATTN=0
done
tr ctx3800 Q4_K_M 0 VELLUM_TRACE_CTX=3800
echo "[${SECONDS}s] traces done" >> $S
tar czf $O/traces.tgz -C $O t && rm -rf $O/t
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
