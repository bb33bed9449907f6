#!/usr/bin/env bash
# Round 45, call 6: the probe for Q/K/V and attention in one launch of a cluster a KV group
# (--cluster-probe: resident clusters of 8-16 blocks, a cluster's hand-off, 14.2 MB through 128
# blocks in clusters of 16), and what the one-row attention's work after its wait costs a step now
# (VELLUM_CUDA_ROPE_ATTN_DBG=1: it leaves right after the wait; results wrong), llama3-8b Q4_K_M batch 1.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
($V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1) &
timeout 60 $C --cluster-probe > $O/probe.txt 2>&1; echo "probe exit $?" >> $S
grep "cluster probe" $O/probe.txt >> $S
wait
for i in 1 2; do b1 default Q4_K_M; b1 attn-leaves-after-wait Q4_K_M VELLUM_CUDA_ROPE_ATTN_DBG=1; done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
