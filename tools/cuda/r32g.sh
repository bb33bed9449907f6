#!/usr/bin/env bash
# Round 32, call 7: where a 512-token prefill's GPU time goes on main (ncu, kernels serialized,
# eager): llama3-8b Q4_K_M and BF16, every kernel's time summed by kernel, the top 30.
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
nvidia-smi -L
S=$O/summary.txt
for T in Q4_K_M BF16; do
  "$D/vellum" gguf synth --preset llama3-8b --type $T -o /tmp/l8b-$T.gguf > /dev/null 2>&1
  VELLUM_PROFILE_PREFILL=512 timeout 300 ncu --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-$T.gguf > /tmp/ncu-$T.csv 2> /tmp/ncu-$T.log
  echo "== $T prefill 512 (exit $?)" >> $S
  python3 $D/ncu_kernels.py /tmp/ncu-$T.csv 30 >> $S 2>&1
done
cat $S
