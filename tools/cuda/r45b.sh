#!/usr/bin/env bash
# Round 45, call 2: the one-row attention with a KV group's query heads in one block (GQA sharing,
# attn_rope_row_gqa_kernel): --attn-only (its cases against f64, bit for bit against a block a head),
# --graphs on llama3.2-1b Q4_K_M and Q8_0 (the model's logits against a block a head), llama3-8b batch 1
# (graphs + PDL) with 4 heads a block (default), 2, and 1 (VELLUM_CUDA_ROPE_ATTN_GQA=1, round 29's
# kernel), alternating, and one sequence at 1k context.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1 & done; wait) &
timeout 200 $C --attn-only > $O/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 $O/attn.txt)" >> $S
grep -E "FAIL" $O/attn.txt | cut -c1-200 | head -10 >> $S
grep -E "heads a block vs" $O/attn.txt | sed -E 's/ +/ /g' | cut -c1-160 | head -4 >> $S
left attn done
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 150 $C --graphs /tmp/p-$T.gguf > $O/graphs-$T.txt 2>&1
  grep -E "one-row attention|SwiGLU int8|graphs vs|kernel vs|row norm vs|FAIL" $O/graphs-$T.txt | grep -v " err " | sed -E "s/ +/ /g; s/^/$T /" | cut -c1-230 >> $S
done
left graphs done
wait
for i in 1 2; do
  b1 gqa4 Q4_K_M; b1 head1 Q4_K_M VELLUM_CUDA_ROPE_ATTN_GQA=1; b1 gqa2 Q4_K_M VELLUM_CUDA_ROPE_ATTN_GQA=2
  b1 gqa4 Q8_0; b1 head1 Q8_0 VELLUM_CUDA_ROPE_ATTN_GQA=1
done
left b1 done
cut -d'|' -f1 $O/b1.txt >> $S
for i in 1 2; do
  for G in 4 1; do
    for T in Q4_K_M Q8_0; do
      L=/tmp/s1-$T-$G.log
      VELLUM_CUDA_ROPE_ATTN_GQA=$G VELLUM_BENCH_SEQS=1 VELLUM_BENCH_PREFILL=0 VELLUM_BENCH_QUICK=1 timeout 60 $C --only-bench --skip-op-bench --model /tmp/l8b-$T.gguf > $L 2>&1
      echo "$T 1 seq at 1k, gqa cap $G: $(grep -E '^decode 1 seqs' $L | grep 'graphs on' | sed -E 's/.*: ([0-9.]+) ms\/step, ([0-9]+) tok.*/\2 tok\/s/' | tr '\n' ' ')" >> $S
    done
  done
done
left seqs done
cat $S
