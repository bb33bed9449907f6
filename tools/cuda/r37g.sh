#!/usr/bin/env bash
# Round 37, call 7: the new fragment probe (check_frag_probe) and the rest of --dq-only.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum_cuda_check.gz; chmod +x $D/vellum_cuda_check
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
timeout 200 $D/vellum_cuda_check --dq-only > ${OUT:-/tmp}/dq.txt 2>&1; echo "dq checks (exit $?): $(tail -1 ${OUT:-/tmp}/dq.txt)"
grep -E "FAIL|fragments" ${OUT:-/tmp}/dq.txt | cut -c1-220
