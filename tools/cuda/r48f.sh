#!/usr/bin/env bash
# Round 48, call 6: the staged producer's copies gated on the one-row attention's signal that Q/K/V
# has finished (VELLUM_CUDA_NORM_OUT_STAGED_GO=1: a flag word a layer, RowNormOut::go_flag).
# --norm-out-only; --graphs on llama3.2-1b Q4_K_M and Q8_0 with staged 4 + go (graphs vs eager, and a
# timeout would show a wait that never ends); chain traces of staged 4 + go; batch 1: main, staged 4,
# staged 4 + go, staged 2 + go, three alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 150 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
grep -E "FAIL" $O/normout.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  VELLUM_CUDA_NORM_OUT_STAGED=4 VELLUM_CUDA_NORM_OUT_STAGED_GO=1 timeout 200 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  echo "[${SECONDS}s] --graphs llama3.2-1b $T, staged 4 + go (exit $?)" >> $S
  grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
done
wait
for T in Q4_K_M Q8_0; do
  VELLUM_CUDA_NORM_OUT_STAGED=4 VELLUM_CUDA_NORM_OUT_STAGED_GO=1 timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-$T.gguf > $O/trace-$T-S4go.md 2> /tmp/trace-$T.log
  echo "[${SECONDS}s] trace $T S4go: exit $? $(grep -c '^| [0-9]' $O/trace-$T-S4go.md) launches" >> $S
  python3 $D/chain_summary.py $O/trace-$T-S4go.md >> $S 2>&1
done
for i in 1 2 3; do
  for T in Q4_K_M Q8_0; do
    b1 main $T
    b1 S4 $T VELLUM_CUDA_NORM_OUT_STAGED=4
    b1 S4go $T VELLUM_CUDA_NORM_OUT_STAGED=4 VELLUM_CUDA_NORM_OUT_STAGED_GO=1
    b1 S2go $T VELLUM_CUDA_NORM_OUT_STAGED=2 VELLUM_CUDA_NORM_OUT_STAGED_GO=1
  done
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
