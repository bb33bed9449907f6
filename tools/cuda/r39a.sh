#!/usr/bin/env bash
# Round 39, call 1 (diagnostic): --attn-only (round 38's last form of check_qkv_rope, never run on a GPU);
# the prefill attention's timings; ncu's view of attn_wg_kernel at 512 and 8 192 tokens: pipe
# utilization (tensor, transcendental), warp states, and stall samples per SASS instruction.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { if [ $SECONDS -gt 400 ]; then echo "skipped at ${SECONDS}s: $*" >> $S; return 1; fi; echo "[${SECONDS}s] $*" >> $S; }
timeout 100 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S
grep -E "FAIL" /tmp/attn.txt | sort -u | cut -c1-220 >> $S; grep -E "Q/K/V" /tmp/attn.txt | cut -c1-200 | head -12 >> $S
left prefill-attn && attn_prefill base $C >> $S
M=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,gpu__time_duration.sum,sm__warps_active.avg.per_cycle_active
for T in 512 8192; do
  left ncu-metrics $T && { VELLUM_PREFILL_ATTN_T=$T timeout 60 ncu --clock-control none -k "regex:attn_wg_kernel" --launch-skip 2 --launch-count 1 --metrics $M --csv $C --prefill-attn-only > /tmp/m-$T.csv 2>/tmp/m-$T.err
    echo "metrics T=$T exit $?" >> $S; grep -v "^==" /tmp/m-$T.csv | python3 -c "
import csv,sys
r=list(csv.reader(sys.stdin)); h=r[0]
for row in r[1:]:
  print('  ', row[h.index('Kernel Name')][:60], row[h.index('Metric Name')], row[h.index('Metric Value')])" >> $S 2>&1; tail -2 /tmp/m-$T.err >> $S; }
  left ncu-source $T && { VELLUM_PREFILL_ATTN_T=$T timeout 90 ncu --clock-control none -k "regex:attn_wg_kernel" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --prefill-attn-only > /tmp/src-$T.csv 2>/tmp/src-$T.err
    echo "source T=$T exit $? lines $(wc -l < /tmp/src-$T.csv)" >> $S; tail -2 /tmp/src-$T.err >> $S
    gzip -c /tmp/src-$T.csv > $O/src-$T.csv.gz; python3 $D/ncu_stalls.py /tmp/src-$T.csv 25 >> $S 2>&1; }
done
echo "done at ${SECONDS}s" >> $S
cat $S
