#!/usr/bin/env bash
# Round 49, call 5: the one-row attention's V placement chosen by occupancy (registers while the
# device holds every cluster at once, else shared memory; VELLUM_CUDA_ROPE_ATTN_VSMEM=0 / 1 forces
# either). --attn-only and greedy text (auto vs forced, identical); llama3-8b Q4_K_M / Q8_0 batch 1
# after 16 (2 slices), 300 (4 slices) and 600 tokens (8 slices), auto against the forced placements.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
nvidia-smi -L > $S
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "[${SECONDS}s] attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-200 | head -8 >> $S
$V gguf synth --preset llama3.2-1b --type Q4_K_M --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p4.gguf > /dev/null 2>&1
P="$(for i in $(seq 1 55); do printf 'the quick brown fox jumps over the lazy dog again and '; done)"
g() { local L=$1; shift; env "$@" timeout 60 $V run -m /tmp/p4.gguf --device cuda -p "$P" -n 200 --temp 0 > $O/run-$L.txt 2> $O/run-$L.log; }
g auto; g smem VELLUM_CUDA_ROPE_ATTN_VSMEM=1; g regs VELLUM_CUDA_ROPE_ATTN_VSMEM=0
echo "greedy text after a long prompt ($(grep -o 'prompt: [0-9]* tokens' $O/run-auto.log)), auto vs V in shared memory: $(cmp -s $O/run-auto.txt $O/run-smem.txt && echo identical || echo DIFFER); vs registers: $(cmp -s $O/run-auto.txt $O/run-regs.txt && echo identical || echo DIFFER)" >> $S
wait
echo "[${SECONDS}s] models ready" >> $S
for i in 1 2; do
  for T in Q4_K_M Q8_0; do
    [ $SECONDS -lt 480 ] || break 2
    b1 ctx16-auto $T
    b1 ctx16-smem $T VELLUM_CUDA_ROPE_ATTN_VSMEM=1
    b1 ctx300-auto $T VELLUM_BENCH_B1_CTX=300
    b1 ctx300-smem $T VELLUM_BENCH_B1_CTX=300 VELLUM_CUDA_ROPE_ATTN_VSMEM=1
    b1 ctx600-auto $T VELLUM_BENCH_B1_CTX=600
    b1 ctx600-regs $T VELLUM_BENCH_B1_CTX=600 VELLUM_CUDA_ROPE_ATTN_VSMEM=0
  done
done
echo "[${SECONDS}s] b1 done" >> $S
rm -f $O/run-* $O/attn.txt
cut -d'|' -f1 $O/b1.txt >> $S
cat $S
