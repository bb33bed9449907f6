#!/usr/bin/env bash
# Round 13 diagnostic: dq_mma kernel time with parts switched off (VELLUM_CUDA_DQ_DBG: 1 no proxy fence, 2 no refill wait, 4 no dequant; results wrong).
# The warp-specialized kernel it measured is on branch r13-dq-ws (not on main).
D=$(cd "$(dirname "$0")" && pwd); export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
for P in "Q4_K 14336 4096 128" "Q4_K 14336 4096 512" "Q4_K 14336 4096 32" "Q6_K 14336 4096 128"; do
  L="$P:"
  for F in 0 1 2 4 3 7; do
    L="$L f$F=$(VELLUM_CUDA_DQ_DBG=$F timeout 20 $C --dq-probe $P 2>&1 | tail -1 | sed -E 's/.*: ([0-9.]+) us.*/\1/')"
  done
  echo "$L"
done
