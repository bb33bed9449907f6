#!/usr/bin/env bash
# Round 29, call 13: before and after on one machine. Batch-1 decode (graphs + PDL) of llama3-8b
# Q4_K_M and Q8_0 with this round's binary and round 28's (vellum_cuda_check_r28, built from aa278fe),
# alternating; the quick bench (aggregate decode at 1k context, prefill) of this round's binary; BF16
# batch 1 both ways last.
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_r28.gz
source $D/final_common.sh
nvidia-smi -L
for T in Q4_K_M Q8_0; do "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1; done
C0=$C
for R in 1 2; do
  for T in Q4_K_M Q8_0; do
    C=$C0; b1 r29-$R $T
    C=$D/vellum_cuda_check_r28; b1 r28-$R $T
  done
done
cat $O/b1.txt
C=$C0; q r29 Q4_K_M
q r29 Q8_0
cat $O/quick.txt
rm -f /tmp/l8b-Q8_0.gguf
"$D/vellum" gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
C=$C0; b1 r29 BF16
C=$D/vellum_cuda_check_r28; b1 r28 BF16
tail -2 $O/b1.txt
