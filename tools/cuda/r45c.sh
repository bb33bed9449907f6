#!/usr/bin/env bash
# Round 45, call 3: the Q4_K/Q6_K norm-out producers (output and down projections of a one-row layer
# tail) as 16 warps of 2 rows and 2 passes: 22 (86-87 registers) and 23 (at most 72, so that a block
# fits beside a one-row attention block or a SwiGLU wave's tail) against the default 32 warps of 1
# row: --norm-out-only (bit for bit with the plain launch), --graphs on llama3.2-1b Q4_K_M with 23,
# and llama3-8b Q4_K_M batch 1 alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
($V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1) &
timeout 100 $C --norm-out-only > $O/no.txt 2>&1; echo "norm-out checks (exit $?): $(tail -1 $O/no.txt)" >> $S
grep -E "FAIL" $O/no.txt | cut -c1-200 | head -10 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-Q4_K_M.gguf > /dev/null 2>&1
VELLUM_CUDA_ROW_NORM_R=23 timeout 150 $C --graphs /tmp/p-Q4_K_M.gguf > $O/graphs-23.txt 2>&1
grep -E "graphs vs|row norm vs|FAIL" $O/graphs-23.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/R23 /" | cut -c1-230 >> $S
left checks done
wait
for i in 1 2 3; do
  b1 default Q4_K_M; b1 r22 Q4_K_M VELLUM_CUDA_ROW_NORM_R=22; b1 r23 Q4_K_M VELLUM_CUDA_ROW_NORM_R=23
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
