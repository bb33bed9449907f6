#!/usr/bin/env bash
# Round 39, call 4 (the final binary: the copying warp is the default, the overlapped loop removed):
# every op against the CPU and the model checks (final_checks); --attn-only; the prefill attention at
# 512 / 2 048 / 8 192 and 32 768 tokens (default and round 31's copying warpgroup); Q8_0 prefill 512
# three times; the quick bench for Q8_0, Q4_K_M and BF16.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 500 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
nvidia-smi -L >> $S
SYNTH_TYPES="Q8_0 Q4_K_M BF16" final_checks
cat $O/final.txt >> $S
left attn && { timeout 150 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S; grep FAIL $O/attn.txt | sort -u | cut -c1-200 >> $S; }
for w in -1 1; do left prefill-attn ws=$w && attn_prefill ws$w $C VELLUM_CUDA_ATTN_WG_WS=$w >> $S; done
for w in -1 1; do left 32k ws=$w && { VELLUM_CUDA_ATTN_WG_WS=$w VELLUM_PREFILL_ATTN_T=32768 timeout 120 $C --prefill-attn-only 2>&1 | grep "prefill attention" | cut -c1-200 | sed "s/^/ws=$w /" >> $S; }; done
export VELLUM_BENCH_PREFILL=512
for r in 1 2 3; do left prefill Q8_0 && model_prefill main $C Q8_0 >> $S; done
unset VELLUM_BENCH_PREFILL
for T in Q8_0 Q4_K_M BF16; do left quick $T && q main $T; done
cat $O/quick.txt >> $S
echo "done at ${SECONDS}s" >> $S
cat $S
