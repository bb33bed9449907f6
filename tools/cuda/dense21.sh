#!/usr/bin/env bash
# Round 21: dense weight copies (CudaBackend::set_dense_weight_cache, --dense-weight-cache). The
# copies' checks (bit for bit against dequantizing each step), then the quick model bench of
# llama3-8b Q4_K_M (batch 1, aggregate decode at 1k context, prefill 512 / 2048) without and with
# copies of every weight (VELLUM_CUDA_DENSE_CACHE_MIB), and `vellum bench` prefill through the
# engine flag. Run next to the stripped vellum, vellum_cuda_check, lib/ and final_common.sh; logs go
# to $OUT.
D=$(cd "$(dirname "$0")" && pwd)
source $D/final_common.sh
V=$D/vellum
[ -f /tmp/l8b-Q4_K_M.gguf ] || $V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > $O/synth.log 2>&1 &
timeout 120 $C --dense-only 2>$O/dense.log > $O/dense.txt; echo "dense checks exit $?"
grep -E "dense|FAIL" $O/dense.txt | cut -c1-200; tail -1 $O/dense.txt
wait
q copies-off Q4_K_M X=1
q copies-on Q4_K_M VELLUM_CUDA_DENSE_CACHE_MIB=20000
${DQ_OFF:+q copies-on-dq-off Q4_K_M VELLUM_CUDA_DENSE_CACHE_MIB=20000 VELLUM_CUDA_DQ_MMA=0}
cat $O/quick.txt
for c in 0 16000; do
  timeout 120 $V bench -m /tmp/l8b-Q4_K_M.gguf --device cuda -p 512,2048 -n 1 -b 1 -r 2 --dense-weight-cache $c > $O/pf-$c.txt 2>$O/pf-$c.log || tail -2 $O/pf-$c.log
  echo "vellum bench prefill, --dense-weight-cache $c: $(grep -E '^\|\s+1 \|' $O/pf-$c.txt | awk -F'|' '{print $3 " tokens: " $6 " tok/s;"}' | tr '\n' ' ')"
done
