#!/usr/bin/env bash
# Round 44, call 7: the int8 tensor-core rows kernel's new launch shapes (x staged, one stage a warp:
# [41] for Q4_K/Q6_K's many short rows, [81] elsewhere): --mma-x-only, --graphs on llama3.2-1b Q4_K_M
# and Q8_0 (4-row steps), llama3-8b decode at 4 and 8 sequences against round 42's rule
# (VELLUM_CUDA_MMA_SHAPE=-1, this round's staging where it won there), then --dq-only (gemv_mma's
# shapes against the CPU, twice bit for bit).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
timeout 100 $C --mma-x-only > $O/mmax.txt 2>&1; echo "mma x checks (exit $?): $(tail -1 $O/mmax.txt)" >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 100 $C --graphs /tmp/p-$T.gguf > /tmp/graphs-$T.txt 2>&1
  grep -E "graphs vs|FAIL" /tmp/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
wait
for r in 1; do
  for T in Q4_K_M Q8_0; do
    for SH in 0 -1; do
      G=/tmp/seqs-$T-$SH.log
      VELLUM_CUDA_MMA_SHAPE=$SH VELLUM_BENCH_SEQS=4,8 VELLUM_BENCH_PREFILL=0 VELLUM_BENCH_QUICK=1 timeout 60 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf > $G 2>&1
      echo "$T shape rule $SH: $(grep -E '^decode [0-9]+ seqs' $G | grep 'graphs on' | sed -E 's/^decode ([0-9]+) seqs.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\1:\3/' | sort -u | tr '\n' ' ')" >> $S
    done
  done
done
left seqs done
timeout 200 $C --dq-only > $O/dq.txt 2>&1; echo "dq checks (exit $?): $(tail -1 $O/dq.txt)" >> $S
grep -E "FAIL" $O/dq.txt | cut -c1-200 | head -10 >> $S
grep -E "int8 mma rows" $O/dq.txt | sed -E 's/ +/ /g' | cut -c1-160 | head -12 >> $S
left dq done
cat $S
