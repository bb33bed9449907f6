#!/usr/bin/env bash
# Round 33, call 8: where a 512-token prefill's GPU time goes now (ncu, kernels serialized, eager;
# as round 32's call 7): llama3-8b Q4_K_M and Q8_0, every kernel's time summed by kernel, the top 16.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K_M Q8_0; do
  "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1
  VELLUM_PROFILE_PREFILL=512 timeout 100 ncu --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-$T.gguf > /tmp/ncu-$T.csv 2> /tmp/ncu-$T.log
  echo "== $T prefill 512 (exit $?)" >> $S
  python3 $D/ncu_kernels.py /tmp/ncu-$T.csv 16 >> $S 2>&1
done
cat $S
