#!/usr/bin/env bash
# Round 47, call 1 (branch r47-kq-async, kept as tools/cuda/results/r47-kq-async.patch): the Q4_K / Q6_K one-row launches with their weights in flight in a cp.async ring
# in shared memory (KqAsyncBlock): --async-only (bit for bit against the register kernels, and the
# ring producers' x, z copy and sums), the kernels alone (--gemv-only, Q4_K and Q6_K, every variant),
# --graphs on llama3.2-1b Q4_K_M with every ring on, and llama3-8b Q4_K_M batch 1 alternating:
# main, ring producers of 2 / 4 stages, ring plain launches of 2 / 4, both at 4.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 150 $C --async-only > $O/async.txt 2>&1; echo "[${SECONDS}s] async checks (exit $?): $(tail -1 $O/async.txt)" >> $S
grep -E "FAIL" $O/async.txt | cut -c1-200 | head -8 >> $S
VELLUM_BENCH_GEMV_TYPES=Q4_K,Q6_K timeout 240 $C --only-bench --gemv-only > $O/gemv.txt 2>&1
echo "[${SECONDS}s] kernels alone (exit $?)" >> $S
grep -E "^kernel .*(r7 R=1 P=1|r7 R=1 P=2|r7 R=2 P=1|ring)" $O/gemv.txt | sed -E 's/, [0-9]+ GB\/s//; s/^kernel //; s/ outputs differ from r7 R=1 P=1//' | cut -c1-150 >> $S
wait
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_KQ_ASYNC=4 VELLUM_CUDA_KQ_ASYNC_OUT=4 timeout 150 $C --graphs /tmp/p4.gguf > $O/graphs.txt 2>&1
echo "[${SECONDS}s] --graphs with rings of 4 (exit $?)" >> $S
grep -E "graphs vs|kernel vs|row norm vs|FAIL" $O/graphs.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-200 >> $S
for i in 1 2; do
  b1 main Q4_K_M
  b1 out2 Q4_K_M VELLUM_CUDA_KQ_ASYNC_OUT=2
  b1 out4 Q4_K_M VELLUM_CUDA_KQ_ASYNC_OUT=4
  b1 plain2 Q4_K_M VELLUM_CUDA_KQ_ASYNC=2
  b1 plain4 Q4_K_M VELLUM_CUDA_KQ_ASYNC=4
  b1 both4 Q4_K_M VELLUM_CUDA_KQ_ASYNC=4 VELLUM_CUDA_KQ_ASYNC_OUT=4
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
