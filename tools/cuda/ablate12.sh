#!/usr/bin/env bash
# Round 12: batch-1 ablation (VELLUM_CUDA_ABLATE: skip a class of kernels, wrong results, to see what it costs in
# a graphs + PDL step) and the int8 GEMV variant sweep, then an ncu profile of one eager Q4_K_M step. Copy next to
# vellum, vellum_cuda_check, ncu_summary.py and lib/ in a .devcarry folder (as run5.sh).
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi -L
for T in Q4_K_M BF16; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait
b1() { # label, env...
  local L=$1; shift
  env "$@" timeout 100 "$D/vellum_cuda_check" --only-bench --batch1-only --model $M 2>"$O/b1-$T-$L.log" >/dev/null
  echo "$T $L: $(grep 'decode batch 1' "$O/b1-$T-$L.log" | sed -E 's/.*\]: ([0-9.]+) tok.*/\1/' | tr '\n' ' ')" | tee -a "$O/summary.txt"
}
for T in Q4_K_M BF16; do
  M=/tmp/l8b-$T.gguf
  for A in 0 1 2 4 8 16 15 31; do b1 ablate$A VELLUM_CUDA_ABLATE=$A; done
done
T=Q4_K_M; M=/tmp/l8b-$T.gguf
for V in 1 2 4 8 12 14 21 22 24; do b1 var$V VELLUM_CUDA_GEMV_I8_VARIANT=$V; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
VELLUM_PROFILE_CTX=1024 VELLUM_PROFILE_BATCH1_ONLY=1 timeout 200 "$NCU" --clock-control none --profile-from-start off \
  --metrics gpu__time_duration.sum --csv "$D/vellum_cuda_check" --profile $M > "$O/prof-$T.csv" 2> "$O/prof-$T.err"
python3 "$D/ncu_summary.py" "$O/prof-$T.csv" | head -18 > "$O/prof-sum.txt"
python3 - "$O/prof-$T.csv" > "$O/prof-seq.txt" <<'PY'
import csv,sys,re
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]; h=rows[0]; rows=rows[1:]
ki=h.index("Kernel Name"); vi=h.index("Metric Value"); gi=h.index("Grid Size"); bi=h.index("Block Size")
for r in rows[:40]:
    n=re.sub(r"\(.*","",r[ki]).replace("void ","").replace("vellum::cuda::","")[:80]
    print(f"  {float(r[vi].replace(',',''))/1000:7.2f} {r[gi]:>14} {r[bi]:>12} {n}")
PY
cat "$O/prof-sum.txt"; head -30 "$O/prof-seq.txt"
echo ====; cat "$O/summary.txt"
