#!/usr/bin/env bash
# Round 34, call 1: where a 512-token prefill's wall time goes on main (7607879): the bench's wall
# against the kernels' sum under ncu at the machine's own clocks (--clock-control none), and the
# prefill attention at 512 tokens under its launch knobs.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
"$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1
export VELLUM_BENCH_PREFILL=512
model_prefill base $C Q4_K_M >> $S
for e in "X=1" VELLUM_CUDA_ATTN_WG_KV=64 VELLUM_CUDA_ATTN_WG_ORDER=0 VELLUM_CUDA_ATTN_WG_ORDER=1 VELLUM_CUDA_ATTN_WG_PP=1 VELLUM_CUDA_ATTN_WG_PP=0; do
  attn_prefill "$e" $C $e >> $S
done
VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q4_K_M.gguf > /tmp/ncu.csv 2> /tmp/ncu.log
echo "== Q4_K_M prefill 512, ncu --clock-control none (exit $?)" >> $S
python3 $D/ncu_kernels.py /tmp/ncu.csv 24 >> $S 2>&1
model_prefill base2 $C Q4_K_M >> $S
cp /tmp/pa-X=1.txt $O/ 2>/dev/null
cat $S
