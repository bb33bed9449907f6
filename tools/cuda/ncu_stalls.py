#!/usr/bin/env python3
# Reads `ncu --page source --print-source sass --csv` output (argv[1]): stall samples by address chunk and
# the instructions with the most samples (argv[2], 15), each with its main stall reason (round 38, call 7).
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
i = next(k for k, r in enumerate(rows) if r and r[0] == "Address")
hdr, body = rows[i], [r for r in rows[i + 1:] if len(r) == len(rows[i])]
A, S, N, X = hdr.index("Address"), hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Instructions Executed")
stall_cols = [k for k, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
def f(v):
    try: return float(v.replace(",", ""))
    except: return 0.0
tot = sum(f(r[N]) for r in body); ins = sum(f(r[X]) for r in body)
print(f"{len(body)} sass lines, {tot:.0f} samples, {ins:.0f} warp instructions")
# samples by region: split the listing into 20 equal chunks of addresses
n = len(body); ch = 40
for c in range(ch):
    part = body[c * n // ch:(c + 1) * n // ch]
    s = sum(f(r[N]) for r in part); x = sum(f(r[X]) for r in part)
    if s > 0.01 * tot:
        top = collections.Counter()
        for r in part:
            for k in stall_cols: top[hdr[k]] += f(r[k])
        print(f"chunk {c:2d} {part[0][A]}..{part[-1][A]}: {100*s/tot:5.1f}% samples, {x:9.0f} inst; " + ", ".join(f"{k[6:]} {v:.0f}" for k, v in top.most_common(3)))
print("top instructions:")
for r in sorted(body, key=lambda r: -f(r[N]))[:int(sys.argv[2]) if len(sys.argv) > 2 else 15]:
    top = max(stall_cols, key=lambda k: f(r[k]))
    print(f"  {r[A]} {100*f(r[N])/tot:5.1f}% {hdr[top][6:]:12s} x{f(r[X]):8.0f}  {r[S][:90]}")
