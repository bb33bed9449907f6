#!/usr/bin/env bash
# Round 40, call 1: eager programmatic launches (launch.h) on by default. (1) A/B, alternating:
# llama3-8b Q8_0 and Q4_K_M prefill 512 / 2 048 with VELLUM_CUDA_EAGER_PDL=1 / 0; the quick bench
# (batch 1 eager and graphs, aggregate decode, prefill) both ways; (2) the checks with it on:
# every op vs the CPU, stories260K, graphs vs eager, CPU vs GPU greedy, invariance, --dq-only.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
left synth done
for i in 1 2; do
  for P in 1 0; do
    for T in Q8_0 Q4_K_M; do
      export VELLUM_CUDA_EAGER_PDL=$P; model_prefill pdl$P-$i $C $T >> $S; unset VELLUM_CUDA_EAGER_PDL
    done
  done
done
left prefill A/B done
for P in 1 0; do for T in Q8_0 Q4_K_M; do q pdl$P $T VELLUM_CUDA_EAGER_PDL=$P; done; done
cat $O/quick.txt >> $S
left quick done
SYNTH_TYPES=none final_checks  # (the models exist)
cat $O/final.txt >> $S
left checks done
if [ $SECONDS -lt 480 ]; then dq_checks SwiGLU >> $S; left dq done; fi
cat $S
