#!/usr/bin/env python3
# The launches of `ncu --csv --metrics gpu__time_duration.sum` output in order, from the first whose
# name matches argv[2] (a regex), argv[3] of them (12): short name, grid size where given, µs.
import csv, re, sys

rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr, rows = rows[0], rows[1:]
ki, vi, ui = hdr.index("Kernel Name"), hdr.index("Metric Value"), hdr.index("Metric Unit")
gi = hdr.index("Grid Size") if "Grid Size" in hdr else None
start = next((i for i, r in enumerate(rows) if re.search(sys.argv[2], r[ki])), 0)
for r in rows[start:start + (int(sys.argv[3]) if len(sys.argv) > 3 else 12)]:
    v, unit = float(r[vi].replace(",", "")), r[ui]
    us = v / 1000 if unit in ("nsecond", "ns") else v if unit in ("usecond", "us") else v * 1000
    name = re.sub(r"\(.*", "", r[ki]).replace("void ", "").replace("vellum::cuda::", "").replace("(anonymous namespace)::", "")[:60]
    print(f"{us:8.1f} us  {name}  {r[gi] if gi is not None else ''}")
