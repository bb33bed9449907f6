#!/usr/bin/env bash
# Round 28, call 11 (needs branch r28-frag-loads's binary; measured, not kept): Q4_K's register fragments
# with the header and each piece in one 16-byte load and the sub-block scales selected without
# branches. Checks (--dq-only), the kernel alone (Q4_K 14 336 x 4 096 at 512 / 2 048 rows, against
# call 2's 106.6 / 387.8 us), llama3-8b Q4_K_M prefill and the quick bench.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz
source $D/final_common.sh
nvidia-smi -L
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
S=$O/summary.txt
dq_checks >> $S
for M in 512 2048; do for DBG in 0 2; do
  echo "14336x4096 rows $M dbg $DBG: $(VELLUM_CUDA_DQ_RS=4 VELLUM_CUDA_DQ_TMA_BT=256 VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 60 $C --dq-probe Q4_K 14336 4096 $M 2>&1 | tail -1 | sed 's/.*: //')" >> $S
done; done
echo "4096x14336 rows 512: $(VELLUM_CUDA_DQ_RS=4 timeout 60 $C --dq-probe Q4_K 4096 14336 512 2>&1 | tail -1 | sed 's/.*: //')" >> $S
cat $S
wait
for r in 1 2; do VELLUM_BENCH_PREFILL=512,1024 model_prefill default $C Q4_K_M >> $S; done
q default Q4_K_M
cat $O/quick.txt >> $S
cat $S
