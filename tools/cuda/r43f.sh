#!/usr/bin/env bash
# Round 43, call 6: the producer's checks alone (--norm-out-only) after the check waits for the
# weight upload (call 5's Q8_0 4 096 x 4 096 failure: the raw launches raced the upload's repack).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
timeout 100 $C --norm-out-only > $O/normout.txt 2>&1; echo "norm-out checks (exit $?): $(tail -1 $O/normout.txt)"
grep -E "norm out" $O/normout.txt | grep -v " err " | sed -E 's/ +/ /g' | cut -c1-200
