#!/usr/bin/env bash
# Round 33, call 7: Q8_0's gate/up back to one launch each (the cut only for K-quants), the cut's
# tail fixed at 128-token tiles. --dq-only; --graphs on llama3.2-1b Q8_0 and Q4_K_M; llama3-8b
# prefill 512 / 1 024, Q4_K_M and Q8_0.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
(for T in Q4_K_M Q8_0; do $V gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks "wave split" | head -12 | cut -c1-200 >> $S
for T in Q8_0 Q4_K_M; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  timeout 200 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-160 | sed "s/^/$T: /" | sort -u | head -1 >> $S
done
wait
export VELLUM_BENCH_PREFILL=512,1024
for T in Q4_K_M Q8_0; do model_prefill final $C $T >> $S; done
cat $S
