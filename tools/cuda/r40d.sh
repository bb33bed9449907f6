#!/usr/bin/env bash
# Round 40, call 4 (main's final binary): the checks (every op vs the CPU, stories260K greedy,
# graphs vs eager, CPU vs GPU greedy, batch invariance), the quick bench of llama3-8b Q4_K_M, Q8_0
# and BF16, --attn-only and --det-only, and end to end `vellum bench` (512-token prompts, 128 new
# tokens, 1 and 32 sequences) with eager programmatic launches on and off.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
SYNTH_TYPES="Q4_K_M Q8_0 BF16" final_checks
cat $O/final.txt >> $S
left checks done
for T in Q4_K_M Q8_0 BF16; do [ $SECONDS -lt 470 ] && q final $T; done
cat $O/quick.txt >> $S
left quick done
if [ $SECONDS -lt 480 ]; then
  timeout 60 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)" >> $S; grep FAIL /tmp/attn.txt | head -5 >> $S
  timeout 60 $C --det-only > /tmp/det.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 /tmp/det.txt)" >> $S; grep FAIL /tmp/det.txt | head -5 >> $S
fi
left attn det done
for P in 1 0; do
  [ $SECONDS -lt 540 ] || break
  VELLUM_CUDA_EAGER_PDL=$P timeout 50 $V bench -m /tmp/l8b-Q4_K_M.gguf --device cuda -p 512 -n 128 -b 1,32 -r 1 > /tmp/e2e-$P.txt 2>&1
  echo "e2e Q4_K_M eager-pdl $P (exit $?):" >> $S; grep -E "^\|" /tmp/e2e-$P.txt | grep -v -- "---" | cut -c1-220 >> $S
done
left e2e done
rm -f $O/run5.txt $O/compare.log $O/check.log $O/inv.log $O/quick-*.log
cat $S
