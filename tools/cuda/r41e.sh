#!/usr/bin/env bash
# Round 41, call 5 (the final binary): every op against the CPU, stories260K greedy, graphs vs eager,
# CPU vs GPU greedy, batch invariance (final_checks); graphs vs eager on llama3.2-1b Q4_K_M and Q8_0
# (4-row steps on the int8 tensor-core rows kernel); the quick bench of llama3-8b Q4_K_M and Q8_0
# with the kernel (default) and without (VELLUM_CUDA_GEMV_MMA=0), and BF16.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
left() { echo "[${SECONDS}s] $*" >> $S; }
SYNTH_TYPES="Q4_K_M Q8_0 BF16" final_checks
cat $O/final.txt >> $S
left checks done
for T in Q4_K_M Q8_0; do
  $V gguf synth --preset llama3.2-1b --type $T --vocab $D/fixtures/ggml-vocab-deepseek-llm.gguf -o /tmp/p-$T.gguf > /dev/null 2>&1
  echo "$T graphs: $(timeout 100 $C --graphs /tmp/p-$T.gguf 2>&1 | grep -E "graphs vs|FAIL" | sed -E 's/ +/ /g' | cut -c1-200 | head -1)" >> $S
done
left graphs done
for T in Q4_K_M Q8_0; do q default $T; q off $T VELLUM_CUDA_GEMV_MMA=0; done
q default BF16
cat $O/quick.txt >> $S
left quick done
rm -f $O/quick-*.log
cat $S
