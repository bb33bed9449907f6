#!/usr/bin/env python3
# Reads `ncu --page source --print-source sass --csv` output (argv[1]): the instructions with the most
# excessive shared-memory wavefronts and excessive global sectors (round 42).
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
i = next(k for k, r in enumerate(rows) if r and r[0] == "Address")
hdr, body = rows[i], [r for r in rows[i + 1:] if len(r) == len(rows[i])]
def f(v):
    try: return float(v.replace(",", ""))
    except: return 0.0
A, S = hdr.index("Address"), hdr.index("Source")
print("columns:", [h for h in hdr if "xcess" in h or "Wavefront" in h][:8])
for col in [h for h in hdr if "Excessive" in h]:
    c = hdr.index(col); tot = sum(f(r[c]) for r in body)
    print(f"{col}: total {tot:.0f}")
    for r in sorted(body, key=lambda r: -f(r[c]))[:8]:
        if f(r[c]) > 0: print(f"  {r[A]} {f(r[c]):9.0f}  {r[S][:100]}")
