#!/usr/bin/env bash
# Round 41, call 2: 2..8 token rows on int8 tensor cores (gemv_mma.cu). (1) Every op against the CPU
# (check_matmul's new mode 8 "int8 mma rows" at 2..8 rows, the graphs and model checks through it);
# (2) the kernel alone against the rows GEMV and mmq (VELLUM_BENCH_MMA_ONLY, --gemv-only); (3) llama3-8b
# Q4_K_M and Q8_0 quick bench with VELLUM_CUDA_GEMV_MMA = 1 / 0, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
VELLUM_BENCH_MMA_ONLY=1 timeout 200 $C --only-bench --gemv-only > /tmp/mma.txt 2>/dev/null
echo "mma bench exit $?" >> $S
grep -E "^gemv mma" /tmp/mma.txt | sed -E 's/ of copy bw//' >> $S
left bench done
timeout 400 $C 2>$O/check.log > $O/check_table.txt; echo "op check exit $?" >> $S
{ grep -E "int8 mma rows" $O/check_table.txt | sed -E 's/ +/ /g' | cut -c1-200; grep FAIL $O/check_table.txt | head -20; tail -1 $O/check_table.txt; } >> $S
left checks done
wait
for T in Q4_K_M Q8_0; do for M in 1 0; do q mma$M $T VELLUM_CUDA_GEMV_MMA=$M; done; done
cat $O/quick.txt >> $S
left quick done
cat $S
