#!/usr/bin/env python3
"""Compact table of bench_mmq lines: per type and shape, microseconds of dq mma / int8 mma / dequant+cuBLAS by rows."""
import re, sys, collections
rows = collections.OrderedDict()
pat = re.compile(r"matmul (\S+) (\d+x\d+) rows (\d+) \(([^)]+)\): ([\d.]+) us, weights \d+ GB/s = (\d+)% of copy bw, \d+ TFLOP/s = (\d+)%")
for line in open(sys.argv[1]):
    m = pat.search(line)
    if m:
        t, shape, r, mode, us, bw, tf = m.groups()
        rows.setdefault((t, shape), collections.OrderedDict()).setdefault(int(r), {})[mode] = (float(us), bw, tf)
for (t, shape), by in rows.items():
    cells = []
    for r, d in by.items():
        dq = d.get("dq mma"); al = d.get("dq kernel alone"); mq = d.get("int8 mma"); cb = d.get("dequant+cuBLAS")
        f = lambda v: f"{v[0]:.0f}" if v else "-"
        extra = f"[{al[0]:.0f}:{al[1]}%bw,{al[2]}%pk]" if al else ""
        cells.append(f"{r}:{f(dq)}{extra}/{f(mq)}/{f(cb)}")
    print(f"{t} {shape} dq[alone]/mmq/cublas us: " + " ".join(cells))
