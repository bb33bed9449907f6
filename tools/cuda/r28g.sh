#!/usr/bin/env bash
# Round 28, calls 8-9: the full op check after two checks were pinned to the cuBLAS path they test
# (dequantization ahead at 64 rows, dense copies vs dequantized each step: call 7 found the default's
# bulk-copy kernel taking those rows); call 9: the quantized many-row SwiGLU check on a Pair of its own.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
timeout 400 $C 2>$O/check.log > $O/check_table.txt; echo "op check exit $?"
grep -E "FAIL" $O/check_table.txt | head -20; tail -1 $O/check_table.txt
grep -E "dequant ahead|dense copy vs|swiglu Q4_K 1000x1024 rows 264" $O/check_table.txt | cut -c1-160
