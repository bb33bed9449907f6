#!/usr/bin/env bash
# Round 44, call 2: the ring with G passes a bulk copy (knob S·10 + G) and each kernel's own shared
# memory limit: --ring-only, --norm-out-only, the Q4_K/Q6_K GEMVs alone, llama3-8b Q4_K_M batch 1
# with the ring off / 21 / 41 / 22 / 24, alternating.
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
grep -E "^kernel .*(r7 R=1 P=2|r7 R=2 P=1|ring)" $O/gemv.txt | sed -E 's/ \[0 of [0-9]+ outputs differ from r7 R=1 P=1\]//' | cut -c1-130
grep -E "^kernel .*ring" $O/gemv.txt | grep -vc "\[0 of"
wait
for i in 1 2; do
  for r in 0 21 41 22 24; do b1 ring$r Q4_K_M VELLUM_CUDA_KQ_RING=$r; done
done
cut -d'|' -f1 $O/b1.txt
