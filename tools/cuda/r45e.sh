#!/usr/bin/env bash
# Round 45, call 5: main (8daf92b, round 44's review commit, not run on a GPU before) on the GPU:
# final_checks (every op against the CPU, stories260K greedy, graphs vs eager, CPU vs GPU greedy,
# batch invariance), --det-only, and llama3-8b batch 1 in Q4_K_M, Q8_0 and BF16.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
SYNTH_TYPES="Q4_K_M Q8_0 BF16" final_checks
cat $O/final.txt >> $S
echo "[${SECONDS}s] final checks done" >> $S
timeout 100 $C --det-only > $O/det.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 $O/det.txt)" >> $S
for T in Q4_K_M Q8_0 BF16; do b1 main $T; done
cut -d'|' -f1 $O/b1.txt >> $S
echo "[${SECONDS}s] b1 done" >> $S
cat $S
