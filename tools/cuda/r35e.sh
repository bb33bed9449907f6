#!/usr/bin/env bash
# Round 35, call 5 (main's final binary: the bulk-reduction residual store by default, the
# cluster split reverted): round 34's unverified pieces (rope_kv_rows' reordered wait, the
# renumbered graph tags) and this round's, then the quick bench and prefill with the store off / on.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | cut -c1-160 | head -10 >> $S
timeout 60 $C --embed-only > $O/embed.txt 2>&1; echo "embed checks (exit $?): $(tail -1 $O/embed.txt)" >> $S
timeout 200 $C --tail-rows-only > $O/tail.txt 2>&1; echo "tail checks (exit $?): $(tail -1 $O/tail.txt)" >> $S
grep -E "FAIL" $O/tail.txt | cut -c1-160 >> $S
dq_checks >> $S
model_checks >> $S 2>&1
wait
q main Q4_K_M
q main Q8_0
cat $O/quick.txt >> $S
export VELLUM_BENCH_PREFILL=512,1024,2048
for b in 0 1; do VELLUM_CUDA_DQ_BULK_STORE=$b model_prefill b$b $C Q4_K_M >> $S; done
cat $S
