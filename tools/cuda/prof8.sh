#!/usr/bin/env bash
# ncu kernel timings of one eager batch-1 decode step (contexts in CTXS) + batch-1 decode tok/s, llama3-8b synthetic.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi -L
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for T in ${TYPES:-Q4_K_M Q8_0 BF16}; do
  M=/tmp/l8b-$T.gguf
  "$D/vellum" gguf synth --preset llama3-8b --type $T -o $M > /dev/null 2>&1
  for C in ${CTXS:-100 1024}; do
    VELLUM_PROFILE_CTX=$C VELLUM_PROFILE_BATCH1_ONLY=1 timeout 200 "$NCU" --clock-control none --profile-from-start off \
      --metrics gpu__time_duration.sum --csv "$D/vellum_cuda_check" --profile $M > "$O/prof-$T-$C.csv" 2> "$O/prof-$T-$C.err"
    echo "== $T ctx $C (ncu exit $?)"; grep profiled "$O/prof-$T-$C.csv" | cut -c1-150
    python3 "$D/ncu_summary.py" "$O/prof-$T-$C.csv" | head -18
  done
  python3 - "$O/prof-$T-1024.csv" <<'PY'
import csv,sys,re
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]; h=rows[0]; rows=rows[1:]
ki=h.index("Kernel Name"); vi=h.index("Metric Value"); gi=h.index("Grid Size"); bi=h.index("Block Size")
print("-- kernels 0..30 of the step (us, grid, block)")
for r in rows[:30]:
    n=re.sub(r"\(.*","",r[ki]).replace("void ","").replace("vellum::cuda::","")[:90]
    print(f"  {float(r[vi].replace(',',''))/1000:7.2f} {r[gi]:>14} {r[bi]:>12} {n}")
PY
  timeout 100 "$D/vellum_cuda_check" --only-bench --batch1-only --model $M 2>"$O/dec-$T.log" >/dev/null
  grep "decode batch 1" "$O/dec-$T.log" | sed -E 's/^.*\[graphs/[graphs/' | cut -c1-120
  rm -f $M
done
