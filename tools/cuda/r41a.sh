#!/usr/bin/env bash
# (Runs binaries built from branch r41-kq-roll: the knobs below are not on main.)
# Round 41, call 1: the Q4_K / Q6_K GEMVs with their ring refilled as each pass is used (kRoll,
# gemv_kernels.cu). (1) Every variant alone, bit for bit against 1 row x 1 pass (--gemv-only);
# (2) llama3-8b Q4_K_M batch 1 with VELLUM_CUDA_KQ_ROLL = 0 / 2 / 3 / 4, alternating, and the GEMVs
# alone (VELLUM_CUDA_ABLATE=15); (3) the decode chain traced with 0 and 2 (vcc_trace); (4) graphs vs
# eager and the layer kernel on a Q4_K_M llama3.2-1b with rolling on. VELLUM_CUDA_KQ_PAIR_R2=1: the
# Q/K/V pair launch with two Q4_K rows a warp (one wave).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_trace; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
"$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1 &
VELLUM_BENCH_GEMV_TYPES=Q4_K,Q6_K timeout 240 $C --only-bench --gemv-only > /tmp/gemv.txt 2>/dev/null
echo "gemv exit $?" >> $S
grep -E "^(kernel|gemv|matmul_)" /tmp/gemv.txt | sed -E 's/ batch 1//; s/int8 //' > $O/gemv.txt
wait
left gemv done
for i in 1 2 3; do
  for R in 0 2 3 4; do b1 roll$R-$i Q4_K_M VELLUM_CUDA_KQ_ROLL=$R; done
  b1 pairR2-$i Q4_K_M VELLUM_CUDA_KQ_PAIR_R2=1
  b1 pairR2-roll2-$i Q4_K_M VELLUM_CUDA_KQ_PAIR_R2=1 VELLUM_CUDA_KQ_ROLL=2
done
for R in 0 2 3; do b1 gemvs-only-roll$R Q4_K_M VELLUM_CUDA_ABLATE=15 VELLUM_CUDA_KQ_ROLL=$R; done
cat $O/b1.txt >> $S; rm -f $O/b1.txt
left b1 done
for R in 0 2; do
  VELLUM_CUDA_KQ_PAIR_R2=$((R / 2)) VELLUM_CUDA_KQ_ROLL=$R timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-Q4_K_M.gguf > $O/trace-roll$R.md 2> /tmp/trace-$R.log
  echo "trace roll$R (pair R2 $((R / 2))): exit $? $(grep 'chain trace' $O/trace-roll$R.md | cut -c1-160)" >> $S
done
left traces done
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
for R in 2 3; do
  echo "roll$R (pair R2 $((R % 2))): $(VELLUM_CUDA_KQ_PAIR_R2=$((R % 2)) VELLUM_CUDA_KQ_ROLL=$R timeout 200 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|kernel vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-220 | tr '\n' ' ')" >> $S
done
left checks done
cat $S
