#!/usr/bin/env python3
# Sums ncu --csv --metrics gpu__time_duration.sum output of `vellum_cuda_check --profile` per kernel, one table
# per forward step (a step starts at its embed kernel): decode 1 seq, decode 32 seqs, prefill 512.
import csv, sys, re, collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
hdr=rows[0]; rows=rows[1:]
ki=hdr.index("Kernel Name"); vi=hdr.index("Metric Value"); ui=hdr.index("Metric Unit"); gi=hdr.index("Grid Size"); bi=hdr.index("Block Size")
steps=[]; cur=None
for r in rows:
    name=r[ki]
    if "embed" in name: cur=[]; steps.append(cur)
    v=float(r[vi].replace(',',''))
    unit=r[ui]
    us = v/1000 if unit in ("nsecond","ns") else v if unit in ("usecond","us") else v*1000
    short=re.sub(r"\(.*","",name); short=short.replace("void ","")[:70]
    cur.append((short,us,r[gi],r[bi]))
for label,st in zip(["decode1","decode32","prefill512"],steps):
    tot=sum(x[1] for x in st)
    print(f"== {label}: {len(st)} kernels, {tot/1000:.3f} ms GPU time")
    agg=collections.defaultdict(lambda:[0,0.0])
    for n,us,g,b in st:
        key=n
        agg[key][0]+=1; agg[key][1]+=us
    for k,(c,us) in sorted(agg.items(),key=lambda kv:-kv[1][1])[:16]:
        print(f"  {us/1000:8.3f} ms {100*us/tot:5.1f}%  n={c:4d}  avg {us/c:8.2f} us  {k}")
