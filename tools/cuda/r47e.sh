#!/usr/bin/env bash
# Round 47, call 5: call 4's --barrier-probe ran the full check after it (the flag did not skip the
# checks) and was cut by its timeout before its output reached the file. The probe alone.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
timeout 120 $C --barrier-probe > $O/probe.txt 2>&1; echo "[${SECONDS}s] barrier probe (exit $?)" >> $S
sed -E 's/^barrier probe: //' $O/probe.txt | grep -v "^check \|^(checks" | head -40 >> $S
cat $S
