#!/usr/bin/env bash
# Round 38, call 7 (diagnostic): where the fused Q/K/V launch (VELLUM_CUDA_QKV_ROPE=1) stalls: ncu's
# per-SASS-instruction stall samples of one fused launch (--page source), gzipped for reading here.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1
for f in 1 0; do
  VELLUM_CUDA_QKV_ROPE=$f VELLUM_PROFILE_PREFILL=512 timeout 100 ncu --clock-control none --profile-from-start off -k "regex:dq_tma_rs_kernel" --launch-skip 3 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv $C --profile /tmp/l8b-Q8_0.gguf > /tmp/src-$f.csv 2> /tmp/src-$f.err
  echo "rope=$f exit $? lines $(wc -l < /tmp/src-$f.csv)" >> $S; tail -3 /tmp/src-$f.err >> $S
  gzip -c /tmp/src-$f.csv > $O/src-$f.csv.gz
done
head -c 600 /tmp/src-1.csv >> $S
cat $S
