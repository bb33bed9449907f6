#!/usr/bin/env bash
# Round 45, call 9: --cluster-probe again, now also streaming from DRAM (launch i reads buffer i % 8,
# 114 MB in all): can 64 blocks of 1 024 threads in clusters of 8 (one a KV group) stream a Q/K/V's
# 14.2 MB as fast as today's 1 536 blocks of 128 threads?
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
timeout 100 $C --cluster-probe > $O/probe.txt 2>&1; echo "probe exit $?"
grep "cluster probe" $O/probe.txt
