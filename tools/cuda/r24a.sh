#!/usr/bin/env bash
# Round 24, call 1. (1) The final commit of round 23 re-checked (op checks, det checks, stories260K, graphs vs
# eager, CPU vs GPU greedy, invariance). (2) Round 23's open bug, programmatic edges into the det16 GEMV: the
# deterministic proof, invariance and graphs-vs-eager with VELLUM_CUDA_PDL=2 (programmatic edges into every
# keep_full_dependency kernel, det16 included), with and without early launch, and the default mode's graphs vs
# eager under the same edges. (3) ncu kernel times of a 512-token BF16 prefill, deterministic and default.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
S=${STAGES:-verify pdl prof}
has() { [[ " $S " == *" $1 "* ]]; }
nvidia-smi -L
if has verify; then
  SYNTH_TYPES="BF16" final_checks
  cat $O/final.txt
  timeout 150 $C --det-only > $O/det_checks.txt 2>&1; echo "det checks exit $?: $(grep -E 'checks,' $O/det_checks.txt | tail -1)"
  grep FAIL $O/det_checks.txt | head -5 | cut -c1-200
fi
if has pdl; then
  printf 'Once upon a time\nThe capital of France is\nIn 1905, Albert Einstein\nThe quick brown fox\nHere is a recipe for bread:\nThe meaning of life\nWrite a poem about the sea\nTell me about GPUs\n' > /tmp/prompts.txt
  $V gguf synth --preset llama3.2-1b --type BF16 --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p.gguf > /dev/null 2>&1
  i=0
  for E in "VELLUM_CUDA_PDL=1" "VELLUM_CUDA_PDL=2" "VELLUM_CUDA_PDL=2 VELLUM_CUDA_EARLY_LAUNCH=0" "VELLUM_CUDA_PDL=2 VELLUM_CUDA_GRAPHS=0"; do
    i=$((i + 1))
    env $E timeout 150 $V proof -m /tmp/p.gguf --device cuda --deterministic --prompts /tmp/prompts.txt -n 64 --ignore-eos --a "--max-num-seqs 1" --b "--max-num-seqs 8 -b 96" > $O/proof-$i.txt 2>&1
    echo "[$E] proof --deterministic (exit $?): $(grep -iE 'identical|differ' $O/proof-$i.txt | tail -1 | cut -c1-150)"
    env $E timeout 120 $C --invariance /tmp/p.gguf 2>/dev/null | grep -E "deterministic model" | head -1 | cut -c1-200
    env $E timeout 120 $C --deterministic --graphs /tmp/p.gguf 2>/dev/null | grep -E "graphs vs eager" | head -1 | cut -c1-220
  done
  VELLUM_CUDA_PDL=2 timeout 120 $C --graphs /tmp/p.gguf 2>/dev/null | grep -E "graphs vs eager" | head -1 | cut -c1-220
fi
if has prof; then
  [ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
  for M in --deterministic ""; do
    VELLUM_PROFILE_PREFILL=${PREFILL:-512} timeout 200 ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
      $C $M --profile /tmp/l8b-BF16.gguf > $O/prof$M.csv 2> $O/prof$M.err
    echo "== prefill ${PREFILL:-512} BF16 ${M:-default} (ncu exit $?)"
    python3 - $O/prof$M.csv <<'PY'
import csv, sys, re, collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
h=rows[0]; rows=rows[1:]
ki=h.index("Kernel Name"); vi=h.index("Metric Value"); ui=h.index("Metric Unit")
agg=collections.defaultdict(lambda:[0,0.0]); tot=0
for r in rows:
    v=float(r[vi].replace(',','')); u=r[ui]
    us=v/1000 if u in("nsecond","ns") else v if u in("usecond","us") else v*1000
    n=re.sub(r"\(.*","",r[ki]).replace("void ","").replace("vellum::cuda::","").replace("(anonymous namespace)::","")[:80]
    agg[n][0]+=1; agg[n][1]+=us; tot+=us
print(f"  {len(rows)} kernels, {tot/1000:.3f} ms GPU time")
for k,(c,us) in sorted(agg.items(),key=lambda kv:-kv[1][1])[:14]:
    print(f"  {us/1000:7.3f} ms {100*us/tot:5.1f}% n={c:4d} avg {us/c:8.1f} us  {k}")
PY
  done
fi
