#!/usr/bin/env bash
# Round 47, call 4 (branch r47-down-qkv, kept as tools/cuda/results/r47-down-qkv.patch): what a grid barrier costs against a kernel edge (--barrier-probe), and the down +
# Q/K/V launch with the counted barrier (VELLUM_CUDA_DOWN_QKV_VARIANT=1) and also V at 2 passes (=2):
# --down-qkv-only with each (bit for bit), llama3-8b Q4_K_M batch 1 in two alternating rounds.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 120 $C --barrier-probe > $O/probe.txt 2>&1; echo "[${SECONDS}s] barrier probe (exit $?)" >> $S
sed -E 's/^barrier probe: //' $O/probe.txt >> $S
for v in 1 2; do
  VELLUM_CUDA_DOWN_QKV_VARIANT=$v timeout 150 $C --down-qkv-only > $O/dq$v.txt 2>&1
  echo "[${SECONDS}s] down + Q/K/V checks, variant $v (exit $?): $(tail -1 $O/dq$v.txt)" >> $S
  grep FAIL $O/dq$v.txt | cut -c1-200 | head -4 >> $S
done
wait
for i in 1 2; do
  b1 main Q4_K_M
  b1 dq0 Q4_K_M VELLUM_CUDA_DOWN_QKV=1
  b1 dq1 Q4_K_M VELLUM_CUDA_DOWN_QKV=1 VELLUM_CUDA_DOWN_QKV_VARIANT=1
  b1 dq2 Q4_K_M VELLUM_CUDA_DOWN_QKV=1 VELLUM_CUDA_DOWN_QKV_VARIANT=2
done
echo "[${SECONDS}s] b1 done" >> $S
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
