#!/usr/bin/env bash
# Round 21: dense weight copies (CudaBackend::set_dense_weight_cache, --dense-weight-cache). The
# copies' checks (bit for bit against dequantizing each step), then the quick model bench of
# llama3-8b Q4_K_M (batch 1, aggregate decode at 1k context, prefill 512 / 2048) without and with
# copies of every weight (VELLUM_CUDA_DENSE_CACHE_MIB; also with dq_mma off, so that 17-128 rows
# take the copies too), and `vellum bench` through the engine flag (prefill, and decode at 64 / 256
# sequences) on the model with deepseek-llm's vocabulary. Run next to the stripped vellum,
# vellum_cuda_check, lib/, fixtures/ggml-vocab-deepseek-llm.gguf and final_common.sh; logs go to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
V=$D/vellum
M=/tmp/l8b-dsv.gguf
[ -f /tmp/l8b-Q4_K_M.gguf ] || $V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.log 2>&1 &
[ -f $M ] || $V gguf synth --preset llama3-8b --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf --type Q4_K_M -o $M > $O/synth2.log 2>&1 &
timeout 120 $C --dense-only 2>$O/dense.log > $O/dense.txt; echo "dense checks exit $?"
grep -E "dense|FAIL" $O/dense.txt | cut -c1-200; tail -1 $O/dense.txt
wait
q copies-off Q4_K_M X=1
q copies-on Q4_K_M VELLUM_CUDA_DENSE_CACHE_MIB=20000
q copies-on-dq-off Q4_K_M VELLUM_CUDA_DENSE_CACHE_MIB=20000 VELLUM_CUDA_DQ_MMA=0
cat $O/quick.txt
for c in 0 16000; do
  timeout 120 $V bench -m $M --device cuda -p 512,2048 -n 1 -b 1 -r 3 --dense-weight-cache $c > $O/pf-$c.txt 2>$O/pf-$c.log || tail -2 $O/pf-$c.log
  echo "== vellum bench prefill, --dense-weight-cache $c"; sed -n '/^| batch/,$p' $O/pf-$c.txt | grep -v -- '| ---' | cut -c1-120
  timeout 200 $V bench -m $M --device cuda -p 128 -n 256 -b 64,256 -r 1 --max-num-seqs 256 --temp 1 --top-k 0 --top-p 1 --min-p 0 \
    --dense-weight-cache $c > $O/dec-$c.txt 2>$O/dec-$c.log || tail -2 $O/dec-$c.log
  echo "== vellum bench decode, --dense-weight-cache $c"; sed -n '/^| batch/,$p' $O/dec-$c.txt | grep -v -- '| ---' | cut -c1-160
done
