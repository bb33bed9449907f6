#!/usr/bin/env bash
# Round 39, call 8: turns on by default for the copying warp (call 7: 8 192 tokens 517 against 509
# TFLOP/s): --attn-only; the prefill attention at 512 / 2 048 / 8 192 and 32 768 tokens.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 150 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
timeout 100 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S; grep FAIL /tmp/attn.txt | sort -u | cut -c1-200 >> $S
left prefill-attn && attn_prefill default $C >> $S
left 32k && { VELLUM_PREFILL_ATTN_T=32768 timeout 60 $C --prefill-attn-only 2>&1 | grep "prefill attention" | head -1 | cut -c1-130 >> $S; }
echo "done at ${SECONDS}s" >> $S
cat $S
