#!/usr/bin/env bash
# Round 19, fourth call: the layer kernel with L2 prefetch past its ring and a thread a block in the
# quantization of g: op checks, batch 1 (llama3-8b Q4_K_M) on / off / prefetch 0, 16 / ablations,
# then ncu kernel times of one eager one-row step with the kernel on and off.
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
(S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.txt 2>&1; echo "synth $((SECONDS - S)) s" >> $O/synth.txt) &
timeout 150 "$C" --layer-only 2>"$O/layer.log" > "$O/layer.txt"; echo "layer checks exit $?"
grep -E "kernel vs ops|checks," "$O/layer.txt" | cut -c1-160
wait
b1() {  # LABEL ENV...
  local L=$1; shift
  env "$@" timeout 100 "$C" --only-bench --batch1-only --model /tmp/l8b-Q4_K_M.gguf 2>"$O/b1-$L.log" >/dev/null
  echo "$L: $(grep 'decode batch 1' $O/b1-$L.log | sed -E 's/.*\[graphs (.*)\]: ([0-9.]+) tok\/s.*-> ([0-9]+)%/\2/' | tr '\n' ' ')"
}
{ echo "batch 1 tok/s: eager | graphs | graphs+PDL"
  b1 off VELLUM_CUDA_LAYER_KERNEL=0
  b1 on VELLUM_CUDA_LAYER_KERNEL=1
  b1 pf0 VELLUM_CUDA_LAYER_PREFETCH=0
  b1 pf16 VELLUM_CUDA_LAYER_PREFETCH=16
  for A in 1 2 4 8 15; do b1 ablate$A VELLUM_CUDA_LAYER_ABLATE=$A; done
} | tee $O/b1.txt
prof() {  # LABEL ENV...
  local L=$1; shift
  env "$@" VELLUM_PROFILE_BATCH1_ONLY=1 timeout 150 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
    "$C" --profile /tmp/l8b-Q4_K_M.gguf > "$O/prof-$L.csv" 2> "$O/prof-$L.err"
  python3 - "$O/prof-$L.csv" "$L" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; k = h.index("Kernel Name"); v = h.index("Metric Value"); u = h.index("Metric Unit")
t = collections.defaultdict(list)
for r in rows[1:]:
    x = float(r[v].replace(",", "")); x = x / 1000 if r[u] == "nsecond" else x * 1000 if r[u] == "msecond" else x
    t[r[k].split("<")[0].split("(")[0][:40]].append(x)
tot = sum(sum(x) for x in t.values())
print(f"{sys.argv[2]}: {len(rows)-1} kernels, {tot:.0f} us summed")
for n, x in sorted(t.items(), key=lambda a: -sum(a[1]))[:8]:
    print(f"  {n:40s} n {len(x):4d} sum {sum(x):8.1f} us  mean {sum(x)/len(x):6.1f}  min {min(x):6.1f} max {max(x):6.1f}")
PY
}
{ prof on; prof off VELLUM_CUDA_LAYER_KERNEL=0; prof ablate15 VELLUM_CUDA_LAYER_ABLATE=15; } | tee $O/prof.txt
