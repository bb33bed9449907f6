#!/usr/bin/env bash
# Round 51, call 5, the final binary (the rows kernel in 1-2 tiles up to 16 rows, dq_tma from 17):
# --mma-x-only, model_checks (stories260K greedy, graphs vs eager incl. 12 / 20 / 40 rows on
# llama3.2-1b Q4_K_M, CPU vs GPU greedy); the quick bench of llama3-8b Q4_K_M (batch 1, decode at 1k
# from 1 to 256 sequences, prefill) and Q8_0's decode.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf; done) > /dev/null 2>&1 &
timeout 200 $C --mma-x-only > $O/mma-x.txt 2>&1; echo "[${SECONDS}s] --mma-x-only (exit $?): $(tail -1 $O/mma-x.txt)" >> $S
grep FAIL $O/mma-x.txt | awk '!s[$0]++' | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
echo "tile vs alone: $(checks $O/mma-x.txt 'each tile vs') pass" >> $S
model_checks >> $S 2>&1
echo "[${SECONDS}s] model checks" >> $S
wait
echo "[${SECONDS}s] synth" >> $S
G=$O/quick-Q4_K_M.log
VELLUM_BENCH_QUICK=1 VELLUM_BENCH_SEQS=1,2,4,8,12,16,24,32,64,128,256 timeout 300 $C --only-bench --skip-op-bench --model /tmp/l8b-Q4_K_M.gguf > $G 2>&1
echo "[${SECONDS}s] Q4_K_M quick bench (exit $?)" >> $S
grep -E "decode batch 1|prefill (512|2048) tokens \[default|^decode [0-9]+ seqs.*graphs on|copy" $G | awk '!s[$0]++' | cut -c1-200 >> $S
G=$O/quick-Q8_0.log
VELLUM_BENCH_QUICK=1 VELLUM_BENCH_PREFILL=0 VELLUM_BENCH_SEQS=1,8,12,16,24,32,64,128,256 timeout 300 $C --only-bench --skip-op-bench --model /tmp/l8b-Q8_0.gguf > $G 2>&1
echo "[${SECONDS}s] Q8_0 (exit $?)" >> $S
grep -E "decode batch 1|^decode [0-9]+ seqs.*graphs on" $G | awk '!s[$0]++' | cut -c1-200 >> $S
cd $O && tar czf logs.tgz mma-x.txt quick-*.log && rm -f mma-x.txt quick-*.log
cat $S
