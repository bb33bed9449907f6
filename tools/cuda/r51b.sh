#!/usr/bin/env bash
# Round 51, call 2: the int8 tensor-core rows kernel in tiles of 8 token columns (9..32 rows):
# --mma-x-only (tiles vs one tile bit for bit, staged vs loaded, shapes vs f64), --dq-only (matmul
# modes vs f64 at 2 / 32 rows), --graphs on llama3.2-1b Q4_K_M (20 and 40 sequences); the kernel
# alone at 2..32 rows (--rows-mma-bench) and at 32 rows by launch shape; llama3-8b Q4_K_M and Q8_0
# aggregate decode at 1k, 8..64 sequences, against VELLUM_CUDA_GEMV_MMA_MAX=8 (round 50's paths).
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
begin_call
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf; done;
 $V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf) > /dev/null 2>&1 &
chk() {  # chk LABEL ARGS...: a check run's verdict and its failures
  local L=$1; shift
  timeout 200 $C "$@" > $O/chk-$L.txt 2>&1; echo "[${SECONDS}s] $L (exit $?): $(tail -1 $O/chk-$L.txt)" >> $S
  grep -E "FAIL" $O/chk-$L.txt | sed -E 's/ +/ /g' | cut -c1-220 | head -8 >> $S
}
chk mma-x --mma-x-only
echo "tile vs alone: $(checks $O/chk-mma-x.txt 'each tile vs') pass" >> $S
chk dq --dq-only
VELLUM_BENCH_GEMV_TYPES=Q4_K,Q6_K,Q8_0 timeout 200 $C --rows-mma-bench > $O/bench.txt 2>&1
echo "[${SECONDS}s] rows-mma-bench (exit $?)" >> $S
grep -E "^gemv mma" $O/bench.txt | sed -E 's/gemv mma ([^ ]+) ([0-9x]+) at ([0-9]+) rows: ([0-9.]+) us \(([0-9]+)%.*x staged ([0-9.]+) us \(([0-9]+)%, ([0-9]+) outputs differ\) \| rows GEMV ([^|]*)\| mmq ([0-9.]+) us \(([0-9]+)%\).*/\1 \2 m=\3: loaded \4 (\5%) staged \6 (\7%, \8 differ) rows \9| mmq \10 (\11%)/' >> $S
for SH in 41 42 81 82 161; do
  VELLUM_CUDA_MMA_SHAPE=$SH VELLUM_BENCH_MMA_ROWS=32 VELLUM_BENCH_GEMV_TYPES=Q4_K,Q6_K,Q8_0 timeout 100 $C --rows-mma-bench > $O/bench-$SH.txt 2>&1
  echo "shape $SH at 32 rows: $(grep -E '^gemv mma' $O/bench-$SH.txt | sed -E 's/gemv mma ([^ ]+) ([0-9x]+) at .*rows: ([0-9.]+) us.*x staged ([0-9.]+) us.*/\1 \2 \3|\4/' | tr '\n' ' ')" >> $S
done
echo "[${SECONDS}s]" >> $S
wait
timeout 200 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|kernel vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-220 >> $S
seqs tiles Q4_K_M 4,8,12,16,24,32,48,64
seqs max8 Q4_K_M 4,8,12,16,24,32,48,64 VELLUM_CUDA_GEMV_MMA_MAX=8
seqs tiles Q8_0 4,8,12,16,24,32,48,64
seqs max8 Q8_0 4,8,12,16,24,32,48,64 VELLUM_CUDA_GEMV_MMA_MAX=8
echo "[${SECONDS}s]" >> $S
cd $O && tar czf logs.tgz chk-*.txt bench*.txt seqs-*.log && rm -f chk-*.txt bench*.txt
cat $S
