#!/usr/bin/env bash
# Round 29, call 14: after the review (the checks' pool set-up shared by shuffled_pools; the one-row
# kernel's unpack8 one template, the same SASS): --attn-only and --det-only.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
nvidia-smi -L
timeout 250 $C --attn-only > $O/attn-check.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn-check.txt)"
grep FAIL $O/attn-check.txt | head -5 | cut -c1-200
timeout 300 $C --det-only > $O/det-check.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 $O/det-check.txt)"
grep FAIL $O/det-check.txt | head -5 | cut -c1-200
grep -c "deterministic attention" $O/det-check.txt
