#!/usr/bin/env bash
# Round 35, call 6: where a 512-token Q8_0 prefill's time goes on main (ncu at the machine's clocks).
D=$(cd "$(dirname "$0")" && pwd)
for f in vellum vellum_cuda_check; do gunzip -kf $D/$f.gz; chmod +x $D/$f; done
source $D/final_common.sh
"$D/vellum" gguf synth --preset llama3-8b --type Q8_0 -o /tmp/l8b-Q8_0.gguf > /dev/null 2>&1
VELLUM_PROFILE_PREFILL=512 timeout 150 ncu --clock-control none --profile-from-start off --csv --metrics gpu__time_duration.sum $C --profile /tmp/l8b-Q8_0.gguf > /tmp/ncu.csv 2> /tmp/ncu.log
echo "== Q8_0 prefill 512, ncu --clock-control none (exit $?)"
python3 $D/ncu_kernels.py /tmp/ncu.csv 14
