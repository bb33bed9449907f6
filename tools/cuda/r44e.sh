#!/usr/bin/env bash
# Round 44, call 5 (x staged by default where it won then): --mma-x-only (staged vs loaded
# bit for bit at every launch shape), every op against the CPU, stories260K greedy, graphs vs eager,
# CPU vs GPU greedy, batch invariance (final_checks); --det-only; --graphs on llama3.2-1b Q4_K_M and
# Q8_0 (their 4-row steps take the kernel); llama3-8b decode at 4 and 8 sequences, default vs
# VELLUM_CUDA_MMA_STAGE_X=0, and batch 1.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
timeout 120 $C --mma-x-only > $O/mmax.txt 2>&1; echo "mma x checks (exit $?): $(tail -1 $O/mmax.txt)" >> $S
grep FAIL $O/mmax.txt | head -5 >> $S
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
cat $O/final.txt >> $S
grep -E "x staged vs loaded" $O/check_table.txt | grep -c PASS | sed 's/^/mma x checks in the full run, PASS: /' >> $S
left checks done
timeout 100 $C --det-only > $O/det.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 $O/det.txt)" >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "graphs vs|row norm vs|layer kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
for T in Q4_K_M Q8_0; do
  for X in -1 0; do
    G=/tmp/seqs-$T-$X.log
    VELLUM_CUDA_MMA_STAGE_X=$X VELLUM_BENCH_SEQS=4,8 VELLUM_BENCH_PREFILL=0 VELLUM_BENCH_QUICK=1 timeout 100 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf > $G 2>&1
    echo "$T stage_x=$X: $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -u | tr '\n' ' ')" >> $S
  done
  b1 main $T
done
cut -d'|' -f1 $O/b1.txt >> $S
left b1 done
rm -f $O/quick-*.log $O/check.log $O/compare.log $O/inv.log
cat $S
