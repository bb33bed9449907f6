#!/usr/bin/env bash
# Round 44, call 1: the ring launches (gemv_kq_ring.cuh) against the register kernels bit for bit
# (--ring-only, --norm-out-only), the Q4_K/Q6_K GEMVs alone at every variant, llama3-8b Q4_K_M batch 1
# with the ring at 0 (off) / 2 / 4 / 8 stages alternating, and --graphs on llama3.2-1b Q4_K_M with it on.
# Ran on branch r44-kq-ring (the ring is not on main).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
$V gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
timeout 150 $C --ring-only > $O/ring.txt 2>&1; echo "ring checks (exit $?): $(tail -1 $O/ring.txt)"
grep -E "FAIL" $O/ring.txt | cut -c1-200 | head -20
timeout 60 $C --norm-out-only > $O/normout.txt 2>&1; echo "norm-out checks (exit $?): $(tail -1 $O/normout.txt)"
grep -E "FAIL" $O/normout.txt | cut -c1-200 | head -20
VELLUM_BENCH_GEMV_TYPES=Q4_K,Q6_K timeout 200 $C --only-bench --gemv-only > $O/gemv.txt 2>&1
grep -E "^kernel .*(r7 R=1 P=1|r7 R=1 P=2|r7 R=2 P=1|ring)" $O/gemv.txt | cut -c1-170
wait
for i in 1 2; do
  b1 ring0 Q4_K_M VELLUM_CUDA_KQ_RING=0; b1 ring4 Q4_K_M VELLUM_CUDA_KQ_RING=4
  b1 ring8 Q4_K_M VELLUM_CUDA_KQ_RING=8; b1 ring2 Q4_K_M VELLUM_CUDA_KQ_RING=2
done
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
VELLUM_CUDA_KQ_RING=4 timeout 200 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|kernel vs|row norm|FAIL" | sed -E 's/ +/ /g' | cut -c1-220
cut -d'|' -f1 $O/b1.txt
