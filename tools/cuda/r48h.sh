#!/usr/bin/env bash
# Round 48, call 8: after the K-quant pass from shared memory became one function (kq_pass_shared,
# gemv_kq.cuh) for the layer kernel and the staged producer: --norm-out-only, --layer-only (the layer
# kernel against the ops), --graphs on llama3.2-1b Q4_K_M (the layer kernel vs its ops, graphs vs
# eager, the staged producer by default), then llama3-8b Q4_K_M batch 1, default vs staged off.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 100 $C --norm-out-only > $O/normout.txt 2>&1; echo "[${SECONDS}s] norm-out checks (exit $?): $(tail -1 $O/normout.txt)" >> $S
timeout 100 $C --layer-only > $O/layer.txt 2>&1; echo "[${SECONDS}s] layer checks (exit $?): $(tail -1 $O/layer.txt)" >> $S
grep -hE "FAIL" $O/normout.txt $O/layer.txt | sed -E 's/ +/ /g' | cut -c1-200 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 100 $C --graphs /tmp/p4.gguf > $O/graphs-p4.txt 2>&1; echo "[${SECONDS}s] --graphs llama3.2-1b Q4_K_M (exit $?)" >> $S
grep -E "graphs vs|row norm vs|kernel vs|FAIL" $O/graphs-p4.txt | grep -v " err " | sed -E "s/ +/ /g" | cut -c1-220 >> $S
wait
b1 default Q4_K_M
b1 staged0 Q4_K_M VELLUM_CUDA_NORM_OUT_STAGED=0
b1 default Q4_K_M
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
