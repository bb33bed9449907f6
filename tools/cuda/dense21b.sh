#!/usr/bin/env bash
# Round 21, last call: the committed binary with dense copies skipping dq_mma above 32 rows.
# final_common.sh's checks (every op vs the CPU, stories260K greedy, graphs vs eager, CPU vs GPU
# greedy, batch invariance), the dense-copy checks, the quick bench of llama3-8b Q4_K_M with copies
# of every weight, and `vellum bench` decode at 64 / 256 sequences with --dense-weight-cache. Run
# next to the stripped vellum, vellum_cuda_check, lib/, fixtures/, run5.sh, stories_greedy.py and
# final_common.sh; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
V=$D/vellum; M=/tmp/l8b-dsv.gguf
[ -f $M ] || ($V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth2.log 2>&1) &
SYNTH_TYPES="Q4_K_M" final_checks
wait
timeout 120 $C --dense-only 2>$O/dense.log > $O/dense.txt
{ cat $O/final.txt; tail -1 $O/dense.txt; grep FAIL $O/dense.txt; } > $O/final21b.txt
cat $O/final21b.txt
q copies-on Q4_K_M VELLUM_CUDA_DENSE_CACHE_MIB=20000
cat $O/quick.txt
timeout 200 $V bench -m $M --device cuda -p 128 -n 256 -b 64,256 -r 1 --max-num-seqs 256 --temp 1 --top-k 0 --top-p 1 --min-p 0 \
  --dense-weight-cache 16000 --step-profile > $O/dec.txt 2>$O/dec.log || tail -2 $O/dec.log
echo "== vellum bench decode, --dense-weight-cache 16000"; sed -n '/^| batch/,$p' $O/dec.txt | grep -v -- '| ---' | cut -c1-200
