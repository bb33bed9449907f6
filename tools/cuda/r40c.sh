#!/usr/bin/env bash
# Round 40, call 3: (1) the chain of a 512-token llama3-8b Q8_0 prefill, eager programmatic launches
# on and off (vcc_trace: a -DVELLUM_CHAIN_TRACE=ON build; VELLUM_TRACE_PREFILL=512), and a Q4_K_M
# batch-1 decode step's chain on the H200; (2) where a batch-1 token goes on the H200
# (VELLUM_CUDA_ABLATE: 15 = the GEMVs alone, 16 = everything but the GEMVs); (3) the trigger before
# the wait (vcc_early: -DVELLUM_PDL_TRIGGER_EARLY=1) against main, prefill alternating.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check vcc_trace vcc_early; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
for T in Q8_0 Q4_K_M; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
left synth done
for P in 1 0; do
  VELLUM_CUDA_EAGER_PDL=$P VELLUM_TRACE_PREFILL=512 timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-Q8_0.gguf > $O/trace-prefill-pdl$P.md 2> /tmp/trace-$P.log
  echo "trace prefill pdl$P: exit $? $(grep 'chain trace' $O/trace-prefill-pdl$P.md | cut -c1-160)" >> $S
done
timeout 120 $D/vcc_trace --chain-trace /tmp/l8b-Q4_K_M.gguf > $O/trace-decode-Q4_K_M.md 2> /tmp/trace-d.log
echo "trace decode: exit $? $(grep 'chain trace' $O/trace-decode-Q4_K_M.md | cut -c1-160)" >> $S
left traces done
for T in Q4_K_M Q8_0; do
  for A in 0 15 16; do b1 ablate$A $T VELLUM_CUDA_ABLATE=$A; done
done
cat $O/b1.txt >> $S; rm -f $O/b1.txt
left ablation done
for i in 1 2; do
  for X in vellum_cuda_check vcc_early; do
    for T in Q8_0 Q4_K_M; do model_prefill $X-$i $D/$X $T >> $S; done
  done
done
left early A/B done
cat $S
