#!/usr/bin/env bash
# Round 50, call 9: the Q4_K / Q6_K launches load the next pass's x before summing this one (call 8's
# ncu: 17% of the down projection's stall samples wait on x at its use, L1 hit rate 79%): --multi-only,
# --norm-out-only, --graphs on llama3.2-1b Q4_K_M, llama3-8b Q4_K_M batch 1 after 16 / 4 096 tokens
# against the previous binary (vellum_cuda_check_base), alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vellum_cuda_check_base; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 100 $C --norm-out-only > $O/no.txt 2>&1; echo "[${SECONDS}s] --norm-out-only (exit $?): $(tail -1 $O/no.txt)" >> $S
grep -E "FAIL" $O/no.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
timeout 100 $C --multi-only > $O/multi.txt 2>&1; echo "[${SECONDS}s] --multi-only (exit $?): $(tail -1 $O/multi.txt)" >> $S
grep -E "FAIL" $O/multi.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|kernel vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
wait
CN=$C
for r in 1 2 3; do
  C=$D/vellum_cuda_check_base; b1 ctx16-base Q4_K_M; C=$CN
  b1 ctx16-xahead Q4_K_M
done
C=$D/vellum_cuda_check_base; b1 ctx4096-base Q4_K_M VELLUM_BENCH_B1_CTX=4096; C=$CN
b1 ctx4096-xahead Q4_K_M VELLUM_BENCH_B1_CTX=4096
echo "[${SECONDS}s]" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cd $O && tar czf logs.tgz no.txt multi.txt graphs.txt && rm -f no.txt multi.txt graphs.txt
cat $S
