#!/usr/bin/env bash
# Round 39, call 5: prefill 512 and 2 048 with the copying warp (default) and round 31's copying
# warpgroup (VELLUM_CUDA_ATTN_WG_WS=1), alternating on one machine, Q8_0 and Q4_K_M.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 200 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
for T in Q8_0 Q4_K_M; do [ -f /tmp/l8b-$T.gguf ] || "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
for r in 1 2 3; do for T in Q8_0 Q4_K_M; do for w in -1 1; do left $T ws=$w && VELLUM_CUDA_ATTN_WG_WS=$w model_prefill ws$w $C $T >> $S; done; done; done
echo "done at ${SECONDS}s" >> $S
cat $S
