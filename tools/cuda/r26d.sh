#!/usr/bin/env bash
# Round 26, call 6: what the dequantizing warps cost the bulk-copy GEMM (256-token tiles), Q4_K
# 14336x4096 at 2 048 and 512 rows, the kernel alone with parts switched off (VELLUM_CUDA_DQ_TMA_DBG:
# 2 no dequantization, 16 no proxy fence, 32 values not stored, 64 constants stored; results wrong).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for M in 2048 512; do for DBG in 0 2 16 32 64 18 96 48; do
  echo "rows $M dbg $DBG: $(VELLUM_CUDA_DQ_RS=3 VELLUM_CUDA_DQ_TMA_BT=256 VELLUM_CUDA_DQ_TMA_DBG=$DBG timeout 60 $C --dq-probe Q4_K 14336 4096 $M 2>&1 | tail -1)" >> $S
done; done
cat $S
