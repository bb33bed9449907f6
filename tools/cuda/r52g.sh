#!/usr/bin/env bash
# Round 52, call 7: call 6's quick bench put 1 sequence at 500 tok/s (round 51: 524); the same bench
# twice more, alternating with VELLUM_BENCH_SEQS=1 (the seqs lines of calls 1-4: 533-545).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
[ -f /tmp/l8b-Q4_K_M.gguf ] || $V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
echo "[${SECONDS}s] model" >> $S
for r in 1 2; do
  q again$r Q4_K_M
  seqs one$r Q4_K_M 1,2
done
cat $O/quick.txt >> $S
echo "[${SECONDS}s]" >> $S
cat $S
