#!/usr/bin/env bash
# Round 25, call 10: the decode kernels' copy rows without a division a row (attn_decode2_kernel, the
# deterministic mode's split path; round 5's attn_decode_kernel): attention and deterministic checks, the
# deterministic proofs, then the deterministic BF16 prefill (split path) against commit da89343 (base).
D=$(cd "$(dirname "$0")" && pwd)
gunzip -kf $D/vellum.gz $D/vellum_cuda_check_base.gz
source $D/final_common.sh
B=$D/vellum_cuda_check_base
nvidia-smi -L
$V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1 &
timeout 100 $C --attn-only > /tmp/attn.txt 2>&1; echo "attention checks (exit $?): $(tail -1 /tmp/attn.txt)"; grep FAIL /tmp/attn.txt | head -3
timeout 100 $C --det-only > /tmp/det.txt 2>&1; echo "deterministic checks (exit $?): $(tail -1 /tmp/det.txt)"
det_proofs BF16
wait
for L in base new base new; do
  if [ $L = base ]; then X=$B; else X=$C; fi
  G=/tmp/detp-$L.log
  VELLUM_BENCH_QUICK=1 timeout 60 $X --only-bench --skip-op-bench --deterministic --prefill-only --model /tmp/l8b-BF16.gguf > $G 2>&1
  echo "det prefill split path $L: $(grep -E 'prefill (512|2048) tokens' $G | sort -u | sed -E 's/.*prefill ([0-9]+) tokens.*: ([0-9]+) tok\/s.* = ([0-9.]+)% .*/\1: \2 (\3%)/' | tr '\n' ' ')"
done
