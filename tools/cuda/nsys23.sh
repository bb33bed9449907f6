#!/usr/bin/env bash
# Round 23: per-kernel GPU time of the deterministic BF16 batch-1 bench (llama3-8b, graph nodes traced) with
# full edges into the det16 GEMV (PDL=0) and programmatic ones (PDL=1): which kernels take longer.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
NS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1); echo "nsys: $NS"
[ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
for P in 0 1; do
  VELLUM_CUDA_DET16_PDL=$P VELLUM_BENCH_QUICK=1 timeout 240 $NS profile -t cuda --cuda-graph-trace=node -o /tmp/ns$P -f true \
    $C --only-bench --skip-op-bench --deterministic --batch1-only --model /tmp/l8b-BF16.gguf > $O/nsys-run-$P.txt 2>&1
  timeout 120 $NS stats -r cuda_gpu_kern_sum -f csv /tmp/ns$P.nsys-rep > $O/nsys-$P.csv 2>/dev/null
  echo "== PDL=$P: $(grep 'decode batch 1' $O/nsys-run-$P.txt | grep '\[graphs on\]' | sed -E 's/.*\]: //' | cut -c1-40)"
  python3 - $O/nsys-$P.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = next(i for i, r in enumerate(rows) if r and r[0].startswith('Time'))
h = rows[hdr]; data = rows[hdr + 1:]
ti, ci, ai, ni = h.index('Total Time (ns)'), h.index('Instances'), h.index('Avg (ns)'), h.index('Name')
for r in data[:14]:
    print(f"{float(r[ti]) / 1e6:9.1f} ms {int(r[ci]):8d} x {float(r[ai]) / 1e3:8.2f} us  {r[ni][:110]}")
PY
done
