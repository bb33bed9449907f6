#!/usr/bin/env bash
# Round 13 call 1: warp-specialized dq_mma: hang probe, op checks (dq mma), mmq bench, Q4_K_M model with it on/off.
# The warp-specialized kernel it measured is on branch r13-dq-ws (not on main).
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
M=/tmp/l8b-Q4_K_M.gguf; ("$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o $M > /dev/null 2>&1) &
for P in "Q4_K 14336 4096 512" "Q6_K 4096 14336 64" "Q8_0 4096 4096 32"; do
  S=$SECONDS; timeout 30 $C --dq-probe $P > $O/probe.txt 2>&1; rc=$?; echo "probe $P exit $rc ($((SECONDS-S)) s) $(tail -1 $O/probe.txt | cut -c1-150)"
  [ $rc = 124 ] && { echo HANG; exit 1; }
done
S=$SECONDS; timeout 240 $C > $O/check_table.txt 2> $O/check.log; echo "checks exit $? ($((SECONDS-S)) s): $(tail -1 $O/check_table.txt)"
grep FAIL $O/check_table.txt | head -12 | cut -c1-170; tail -2 $O/check.log | cut -c1-300
python3 - $O/check_table.txt <<'PY'
import sys
rows=[l for l in open(sys.argv[1]) if "dq mma" in l and (" PASS" in l or " FAIL" in l)]
errs=[(float(l[60:71]), l[:60].strip()) for l in rows if "run twice" not in l]
print(len(rows), "dq mma checks;", sum(" FAIL" in l for l in rows), "failed; worst error", max(errs) if errs else None)
PY
S=$SECONDS; timeout 200 $C --only-bench --skip-op-bench --mmq-bench > $O/mmq_bench.txt 2>&1; echo "mmq bench exit $? ($((SECONDS-S)) s)"
python3 $D/mmqsum.py $O/mmq_bench.txt > $O/mmqsum.txt
wait
for S in "VELLUM_CUDA_DQ_MMA=0" "VELLUM_CUDA_DQ_MMA=1 VELLUM_CUDA_DQ_MMA_ROWS=9,100000"; do
  L="$O/agg-$(echo "$S" | tr -c "A-Za-z0-9\n" _).log"
  env VELLUM_BENCH_QUICK=1 $S timeout 170 "$C" --only-bench --skip-op-bench --model $M 2>"$L" >/dev/null; echo "bench exit $?"
  P=$(grep -E '^prefill (512|2048) tokens \[default' "$L" | sed -E 's/^prefill ([0-9]+) tokens.*\]: ([0-9]+) tok\/s.*= ([0-9.]+)%.*/\1:\2(\3%)/' | tr '\n' ' ')
  A=$(grep -E '^decode [0-9]+ seqs' "$L" | grep greedy | grep -E 'graphs on\]' | sed -E 's/^decode ([0-9]+) seqs.*\[graphs (o[nf]+)\]: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1=\4/' | tr '\n' ' ')
  echo "$S | $P| $A"
done
cat $O/mmqsum.txt
PROF_ROWS=128 bash $D/prof1.sh 2>&1 | grep -v "^cols"
