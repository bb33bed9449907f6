#!/usr/bin/env bash
# Round 14: the committed binary's checks and a Q4_K_M quick bench (batch 1, 1 seq x 1k / 8k / 32k).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
C=$D/vellum_cuda_check
("$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1) &
bash $D/run5.sh checks > $O/run5.txt 2>&1
timeout 120 $C --invariance /tmp/q.gguf > $O/inv.txt 2>&1
{ tail -1 $O/check_table.txt; grep FAIL $O/check_table.txt | head; grep -E "checks,|greedy|graphs vs|match" $O/run5.txt | cut -c1-160; grep -E "deterministic model" $O/inv.txt | cut -c1-200 | sort -u; } > $O/final.txt
wait
L=$O/quick.log
VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --model /tmp/l8b-Q4_K_M.gguf 2>$L >/dev/null
cat $O/final.txt; grep -E "^decode (batch 1|1 seq|[0-9]+ seqs.*graphs on)" $L | cut -c1-140
