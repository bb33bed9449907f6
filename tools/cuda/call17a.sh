#!/usr/bin/env bash
# Round 17, call 1: where one sequence's decode step goes at long context (llama3-8b Q4_K_M,
# batch 1). ncu of one eager step at 8k and 32k (cold caches: ncu flushes them per kernel), then
# the graphs + PDL step at 8k / 16k / 32k with each decode attention variant forced.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
C=$D/vellum_cuda_check
"$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b.gguf > /dev/null 2>&1
for CTX in 8192 32768; do
  VELLUM_PROFILE_CTX=$CTX VELLUM_PROFILE_BATCH1_ONLY=1 timeout 200 "$NCU" --clock-control none --profile-from-start off \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum \
    --csv $C --profile /tmp/l8b.gguf > $O/prof$CTX.csv 2> $O/prof$CTX.err
  python3 - $O/prof$CTX.csv $CTX <<'PY'
import csv,sys,re,collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]; h=rows[0]; rows=rows[1:]
ki=h.index("Kernel Name"); mi=h.index("Metric Name"); vi=h.index("Metric Value"); ii=h.index("ID"); gi=h.index("Grid Size"); bi=h.index("Block Size")
K=collections.OrderedDict()
for r in rows:
    k=K.setdefault(r[ii],{"name":re.sub(r"\(.*","",r[ki]).replace("void ","").replace("vellum::cuda::","").replace("(anonymous namespace)::","")[:70],"grid":r[gi],"blk":r[bi]})
    k[r[mi]]=r[vi].replace(',','')
ks=list(K.values())
print(f"== ctx {sys.argv[2]}: {len(ks)} kernels, {sum(float(k['gpu__time_duration.sum']) for k in ks)/1e6:.3f} ms")
for k in ks[1:12]:
    print(f"  {float(k['gpu__time_duration.sum'])/1000:7.2f} us dram {float(k['dram__throughput.avg.pct_of_peak_sustained_elapsed']):5.1f}% {float(k['dram__bytes_read.sum'])/1e6:8.2f} MB occ {float(k['sm__warps_active.avg.pct_of_peak_sustained_active']):5.1f}% {k['grid']:>14} {k['blk']:>10} {k['name']}")
agg=collections.defaultdict(lambda:[0,0.0,0.0])
for k in ks: a=agg[k['name'][:60]+" "+k['grid']]; a[0]+=1; a[1]+=float(k['gpu__time_duration.sum'])/1000; a[2]+=float(k['dram__bytes_read.sum'])/1e6
for n,(c,us,mb) in sorted(agg.items(),key=lambda kv:-kv[1][1])[:12]: print(f"  sum {us:8.1f} us n={c:3d} avg {us/c:7.2f} us {mb/c:8.2f} MB {n}")
PY
done
# Graphs + PDL at long context, each decode variant (0 default, 1 round 5, 2 round 7, 4 round 14).
for V in 0 1 2 4; do
  VELLUM_CUDA_ATTN_DECODE=$V timeout 200 $C --only-bench --long-ctx-only --model /tmp/l8b.gguf 2>$O/long$V.log >/dev/null
  echo "variant $V: $(grep -E 'decode batch 1' $O/long$V.log | tail -1 | sed -E 's/.*\]: ([0-9.]+) tok.*/b1 \1/') $(grep 'decode 1 seq x' $O/long$V.log | sed -E 's/decode 1 seq x ([0-9]+k).*: ([0-9.]+) ms\/token.*/\1 \2 ms/' | tr '\n' ' ')"
done
timeout 120 $C --attn-bench 2>/dev/null | grep -E "copy|ctx (8192|32768) x 1 seqs F16" | cut -c1-400
