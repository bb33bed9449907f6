#!/usr/bin/env bash
# Round 29, call 2: --attn-only again (the check's eager steps), then ncu of one eager batch-1 step of
# llama3-8b Q4_K_M at 200 and 1 000 positions with the one-row kernel and without
# (VELLUM_CUDA_ROPE_ATTN=0): the first layer's kernels in order, each alone (ncu serializes them,
# so the pre-wait part counts too), and the step's GPU time by kernel.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
"$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
S=$O/summary.txt
timeout 200 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)" >> $S
grep FAIL $O/attn-check.txt | head -8 | cut -c1-220 >> $S
grep -E "rope_attention .*(took|left)" $O/attn-check.txt | awk '{print $NF}' | sort | uniq -c >> $S
wait
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for CTX in 200 1000; do
  for F in 1 0; do
    L=ctx$CTX-fused$F
    VELLUM_CUDA_ROPE_ATTN=$F VELLUM_PROFILE_CTX=$CTX VELLUM_PROFILE_BATCH1_ONLY=1 timeout 200 "$NCU" --clock-control none --profile-from-start off \
      --metrics gpu__time_duration.sum --csv $C --profile /tmp/l8b-Q4_K_M.gguf > $O/prof-$L.csv 2> $O/prof-$L.err
    echo "== $L" >> $S
    python3 $D/ncu_kernels.py $O/prof-$L.csv | head -9 >> $S
    python3 - $O/prof-$L.csv >> $S <<'PY'
import csv,sys,re
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]; h=rows[0]; rows=rows[1:]
ki=h.index("Kernel Name"); vi=h.index("Metric Value"); gi=h.index("Grid Size"); bi=h.index("Block Size")
for r in rows[1:14]:
    n=re.sub(r"\(.*","",r[ki]).replace("void ","").replace("vellum::cuda::","").replace("(anonymous namespace)::","")[:70]
    print(f"  {float(r[vi].replace(',',''))/1000:7.2f} us {r[gi]:>14} {r[bi]:>12} {n}")
PY
  done
done
cat $S
