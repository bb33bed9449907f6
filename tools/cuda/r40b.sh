#!/usr/bin/env bash
# Round 40, call 2: the register-A dequantizing GEMMs' first weight stages copied before the
# dependency wait (rs_weights_ahead). (1) --dq-only with it on; (2) prefill A/B, alternating, three
# rounds: default against VELLUM_CUDA_DQ_TMA_DBG=64 (weights after the wait, round 39's order),
# llama3-8b Q8_0 and Q4_K_M; (3) call 1's one-sequence decode at 1k (Q4_K_M 467 with eager
# programmatic launches against 503 without, 10 steps) again: --long-ctx-only (20 steps, 1k-32k)
# with VELLUM_CUDA_EAGER_PDL=1 / 0, twice.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
(for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done) &
dq_checks >> $S
left dq done
wait
left synth done
for i in 1 2 3; do
  for X in 0 64; do
    for T in Q8_0 Q4_K_M; do
      export VELLUM_CUDA_DQ_TMA_DBG=$X; model_prefill dbg$X-$i $C $T >> $S; unset VELLUM_CUDA_DQ_TMA_DBG
    done
  done
done
left prefill A/B done
for i in 1 2; do
  for P in 1 0; do
    VELLUM_CUDA_EAGER_PDL=$P timeout 100 $C --only-bench --skip-op-bench --long-ctx-only --model /tmp/l8b-Q4_K_M.gguf > /tmp/long-$P.log 2>&1
    echo "Q4_K_M eager-pdl $P: $(grep -E 'decode batch 1|decode 1 seq' /tmp/long-$P.log | sed -E 's/.*\[graphs (off|on, PDL off|on)\]: ([0-9.]+) tok.*/\2/; s/decode 1 seq x ([0-9]+)k.* ([0-9.]+) tok\/s/\1k:\2/' | tr '\n' ' ')" >> $S
  done
done
left long done
rm -f $O/dq-check.txt
cat $S
