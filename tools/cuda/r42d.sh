#!/usr/bin/env bash
# Round 42, call 4 (the final binary): every op against the CPU (with check_gemv_mma_shapes: each
# launch shape of gemv_mma), stories260K greedy, graphs vs eager, CPU vs GPU greedy, batch invariance
# (final_checks); graphs vs eager on llama3.2-1b Q4_K_M and Q8_0; the rows kernels alone at 8 rows;
# the quick bench of llama3-8b Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
cat $O/final.txt >> $S
grep -E "int8 mma rows" $O/check_table.txt | grep -E "x512 |x1024 |x4352 " | sed -E 's/ +/ /g' | cut -c1-150 | sort -u | head -24 >> $S
left checks done
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T graphs: $(timeout 100 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | head -1)" >> $S
done
left graphs done
VELLUM_BENCH_MMA_ROWS=8 VELLUM_BENCH_MMA_ONLY=1 timeout 100 $C --only-bench --gemv-only > /tmp/mb.txt 2>&1
grep 'gemv mma' /tmp/mb.txt | sort -u | sed -E 's/ \| mmq [0-9.]+ us \([0-9]+%\)//' | cut -c1-170 >> $S
left bench done
q default Q4_K_M; q default Q8_0
cat $O/quick.txt >> $S
left quick done
rm -f $O/quick-*.log $O/check.log $O/compare.log $O/inv.log
cat $S
