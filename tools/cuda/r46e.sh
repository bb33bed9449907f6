#!/usr/bin/env bash
# Round 46, call 5: the pair launch's Q4_K part at 2 rows of 1 pass a warp, now the default, against
# round 29's 1 row of 2 passes (VELLUM_CUDA_PAIR_Q4_R=1): --multi-only (the pair launch vs one matmul
# each, bit for bit), --graphs on llama3.2-1b Q4_K_M, and llama3-8b Q4_K_M batch 1, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 150 $C --multi-only > $O/multi.txt 2>&1; echo "multi checks (exit $?): $(tail -1 $O/multi.txt)" >> $S
grep -E "FAIL" $O/multi.txt | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 150 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1
grep -E "graphs vs|kernel vs|row norm vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-230 >> $S
left checks done
wait
for i in 1 2 3 4; do
  b1 R2 Q4_K_M; b1 R1 Q4_K_M VELLUM_CUDA_PAIR_Q4_R=1
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
