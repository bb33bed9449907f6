#!/usr/bin/env bash
# Round 42, call 5: Q4_K's batch-1 GEMV ring refilled as each pass is used (round 41's kRoll) in the
# short-row launches only (Q/K/V, the Q4_K/Q6_K pair, the output projection): --det-only (batch-1
# rows against the deterministic rows kernel, bit for bit); --invariance on llama3.2-1b Q4_K_M
# (every batch-1 launch of a model against the rows kernels); llama3-8b Q4_K_M batch 1 with it
# (default) and without (VELLUM_CUDA_KQ_ROLL=0), alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
("$D/vellum" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b-Q4_K_M.gguf > /dev/null 2>&1) &
timeout 150 $C --det-only > $O/det.txt 2>&1; echo "det checks (exit $?): $(tail -1 $O/det.txt)" >> $S; grep FAIL $O/det.txt | head -5 >> $S
grep -E "Q4_K|Q6_K" $O/det.txt | grep -iE "batch 1|invarian|alone" | sed -E 's/ +/ /g' | cut -c1-160 | head -4 >> $S
left det done
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
timeout 120 $C --invariance /tmp/p4.gguf 2>/dev/null | grep -E "invarian|checks,|FAIL" | sed -E 's/ +/ /g' | cut -c1-220 >> $S
echo "graphs: $(timeout 100 $C --graphs /tmp/p4.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-160 | head -1)" >> $S
left invariance done
wait
for r in 1 2; do b1 roll Q4_K_M; b1 off Q4_K_M VELLUM_CUDA_KQ_ROLL=0; done
cat $O/b1.txt >> $S
left b1 done
cat $S
