#!/usr/bin/env bash
# The stream-K code is on branch r32-stream-k (measured, not kept: docs/cuda.md, round 32).
# Round 32, call 2: stream-K for the register-A dequantizing GEMM (dq_tma.cu, stream_k.h).
# --dq-only (with the new stream-K checks), --tma-bench (plain grid vs stream-K, kernel alone), then
# llama3-8b Q4_K_M / Q8_0 prefill (512 / 1 024 / 2 048) and the quick bench (decode aggregate at
# 1k context, where 33..256-row steps take the kernel too) with VELLUM_CUDA_DQ_TMA_SK=1 / 0, alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "stream-K" >> $S
wait
timeout 300 $C --tma-bench > $O/tma-bench.txt 2>&1; echo "tma-bench exit $?" >> $S
grep -E "dq_tma Q4_K 14336x4096 rows 512|dq_tma Q4_K 4096x14336 rows 512|dq_tma Q8_0 14336x4096 rows 512|dq_tma Q6_K 14336x4096 rows 2048" $O/tma-bench.txt | sed -E 's/dequant\+cuBLAS.*kernel alone:/alone:/' | cut -c1-300 >> $S
export VELLUM_BENCH_PREFILL=512,1024,2048
for i in 1 2; do
  for K in 1 0; do
    for T in Q4_K_M Q8_0; do
      export VELLUM_CUDA_DQ_TMA_SK=$K; model_prefill sk$K-$i $C $T >> $S
    done
  done
done
unset VELLUM_BENCH_PREFILL
for K in 1 0; do q sk$K Q4_K_M VELLUM_CUDA_DQ_TMA_SK=$K; done
cat $O/quick.txt >> $S
cat $S
