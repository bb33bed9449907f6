#!/usr/bin/env bash
# Round 47, call 2 (branch r47-kq-async, kept as tools/cuda/results/r47-kq-async.patch): call 1 ran a vellum_cuda_check whose cuda_check.cpp object was stale (no
# --async-only, no ring lines in --gemv-only). The same two with the rebuilt binary: the ring
# launches bit for bit against the register kernels, and every Q4_K / Q6_K variant alone.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
timeout 200 $C --async-only > $O/async.txt 2>&1; echo "[${SECONDS}s] async checks (exit $?): $(tail -1 $O/async.txt)" >> $S
grep -E "FAIL" $O/async.txt | cut -c1-200 | head -8 >> $S
VELLUM_BENCH_GEMV_TYPES=Q4_K,Q6_K timeout 300 $C --only-bench --gemv-only > $O/gemv.txt 2>&1
echo "[${SECONDS}s] kernels alone (exit $?)" >> $S
grep -E "^kernel .*(r7 R=1 P=1|r7 R=1 P=2|r7 R=2 P=1|ring)" $O/gemv.txt | sed -E 's/, [0-9]+ GB\/s//; s/^kernel //; s/ outputs differ from r7 R=1 P=1//; s/ int8 / /' | cut -c1-120 >> $S
cat $S
