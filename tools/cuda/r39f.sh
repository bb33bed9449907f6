#!/usr/bin/env bash
# Round 39, call 6: the overlapped loop again, now with K and V on rings of their own (=3) against
# the copying warp alone (=2, the default): --attn-only (bit for bit, poisoned stages); the prefill
# attention at 512 / 2 048 / 8 192 and 32 768 tokens, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 200 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
timeout 150 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep FAIL /tmp/attn.txt | sort -u | cut -c1-200 >> $S; grep -c "overlapping the softmax.*PASS" /tmp/attn.txt >> $S
for w in 3 2 3 2; do left prefill-attn ws=$w && attn_prefill ws$w $C VELLUM_CUDA_ATTN_WG_WS=$w >> $S; done
for w in 3 2; do left 32k ws=$w && { VELLUM_CUDA_ATTN_WG_WS=$w VELLUM_PREFILL_ATTN_T=32768 timeout 120 $C --prefill-attn-only 2>&1 | grep "prefill attention" | head -1 | cut -c1-130 | sed "s/^/ws=$w /" >> $S; }; done
echo "done at ${SECONDS}s" >> $S
cat $S
