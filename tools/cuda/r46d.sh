#!/usr/bin/env bash
# Round 46, call 4: passes and rows in flight of the Q4_K_M launches (measurement knobs): the pair
# launch's Q4_K part at 2 rows of 1 pass a warp (VELLUM_CUDA_PAIR_Q4_R=2, as the all-Q4_K Q/K/V
# launch's default) and the one-row producers at 1 / 2 / 4 passes a warp (VELLUM_CUDA_ROW_NORM_P;
# default Q4_K 2, Q6_K 1). Bits: --multi-only (the pair launch vs one matmul each) and
# --norm-out-only (the producers vs the plain launch) with the knobs; then llama3-8b Q4_K_M batch 1,
# alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
VELLUM_CUDA_PAIR_Q4_R=2 timeout 150 $C --multi-only > $O/multi.txt 2>&1; echo "multi checks, pair Q4_K 2 rows (exit $?): $(tail -1 $O/multi.txt)" >> $S
grep -E "FAIL" $O/multi.txt | cut -c1-200 | head -8 >> $S
grep -E "pair launch" $O/multi.txt | cut -c1-200 | head -4 >> $S
for P in 1 2 4; do
  VELLUM_CUDA_ROW_NORM_P=$P timeout 150 $C --norm-out-only > $O/no-$P.txt 2>&1; echo "norm-out checks P=$P (exit $?): $(tail -1 $O/no-$P.txt)" >> $S
  grep -E "FAIL" $O/no-$P.txt | cut -c1-200 | head -5 >> $S
done
left checks done
wait
for i in 1 2 3; do
  b1 main Q4_K_M; b1 pairR2 Q4_K_M VELLUM_CUDA_PAIR_Q4_R=2; b1 P2 Q4_K_M VELLUM_CUDA_ROW_NORM_P=2
  b1 P4 Q4_K_M VELLUM_CUDA_ROW_NORM_P=4; b1 pairR2P4 Q4_K_M VELLUM_CUDA_PAIR_Q4_R=2 VELLUM_CUDA_ROW_NORM_P=4
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
