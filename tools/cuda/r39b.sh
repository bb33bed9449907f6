#!/usr/bin/env bash
# Round 39, call 2: the prefill attention's copying warp (bulk tensor copies, VELLUM_CUDA_ATTN_WG_WS=2,
# the new default) against round 31's copying warpgroup (=1): --attn-only (the copiers bit for bit,
# poisoned stages); --prefill-attn-only both ways; ncu's stall samples of the new kernel at 8 192;
# llama3-8b Q8_0 prefill at 512 both ways, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 420 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep -E "FAIL" /tmp/attn.txt | sort -u | cut -c1-220 >> $S; grep -E "copying warp|every thread copying" /tmp/attn.txt | cut -c1-230 >> $S
cp /tmp/attn.txt $O/attn.txt
for w in 2 1 2 1; do left prefill-attn ws=$w && attn_prefill ws$w $C VELLUM_CUDA_ATTN_WG_WS=$w >> $S; done
wait
export VELLUM_BENCH_PREFILL=512
for r in 1 2; do for w in 2 1; do left prefill Q8_0 ws=$w && VELLUM_CUDA_ATTN_WG_WS=$w model_prefill ws$w $C Q8_0 >> $S; done; done
left ncu-source && { VELLUM_PREFILL_ATTN_T=8192 timeout 90 ncu --clock-control none -k "regex:attn_wg_kernel" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --prefill-attn-only > /tmp/src.csv 2>/tmp/src.err
    echo "source exit $? lines $(wc -l < /tmp/src.csv)" >> $S; tail -2 /tmp/src.err >> $S
    gzip -c /tmp/src.csv > $O/src-8192.csv.gz; python3 $D/ncu_stalls.py /tmp/src.csv 12 >> $S 2>&1; }
echo "done at ${SECONDS}s" >> $S
cat $S
