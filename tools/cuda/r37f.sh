#!/usr/bin/env bash
# Round 37, call 6 (main's final binary, on an H200): every op against the CPU and the model checks
# (final_checks), the quick bench for Q4_K_M and Q8_0, the paged decode attention's bandwidth and
# the prefill attention (128- and 64-position K/V tiles).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
SYNTH_TYPES="Q4_K_M Q8_0" final_checks
cat $O/final.txt >> $S
for T in Q4_K_M Q8_0; do q main $T; done
cat $O/quick.txt >> $S
timeout 150 $C --attn-bench > $O/attn-bench.txt 2>&1; echo "attn bench exit $?" >> $S
grep -E "paged decode attention ctx (8192|32768)" $O/attn-bench.txt | cut -c1-130 >> $S
attn_prefill kv128 $C >> $S
attn_prefill kv64 $C VELLUM_CUDA_ATTN_WG_KV=64 >> $S
export VELLUM_BENCH_PREFILL=512
for r in 1 2; do model_prefill kv128 $C Q8_0 >> $S; VELLUM_CUDA_ATTN_WG_KV=64 model_prefill kv64 $C Q8_0 >> $S; done
cat $S
