#!/usr/bin/env python3
# Sums `ncu --csv --metrics gpu__time_duration.sum` output per kernel (all launches in the file): total GPU time, then
# the costliest kernels (14, or the second argument) with their share, launch count and average.
import collections, csv, re, sys

rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr, rows = rows[0], rows[1:]
ki, vi, ui = hdr.index("Kernel Name"), hdr.index("Metric Value"), hdr.index("Metric Unit")
agg, total = collections.defaultdict(lambda: [0, 0.0]), 0.0
for r in rows:
    v, unit = float(r[vi].replace(",", "")), r[ui]
    us = v / 1000 if unit in ("nsecond", "ns") else v if unit in ("usecond", "us") else v * 1000
    name = re.sub(r"\(.*", "", r[ki]).replace("void ", "").replace("vellum::cuda::", "").replace("(anonymous namespace)::", "")[:80]
    agg[name][0] += 1
    agg[name][1] += us
    total += us
print(f"  {len(rows)} kernels, {total / 1000:.3f} ms GPU time")
for name, (count, us) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:int(sys.argv[2]) if len(sys.argv) > 2 else 14]:
    print(f"  {us / 1000:7.3f} ms {100 * us / total:5.1f}% n={count:4d} avg {us / count:8.1f} us  {name}")
