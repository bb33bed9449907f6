#!/usr/bin/env bash
# Round 23 (ran against this round's intermediate binaries, which read VELLUM_CUDA_DET16_PDL; main has no such
# knob since: its det16 GEMV keeps full graph edges): the deterministic batch 1 and one sequence at 1k / 8k / 32k,
# llama3-8b BF16, by VELLUM_CUDA_DET16_PDL (calls 9, 17, 23, 25: 0 full, 1 programmatic, 2 programmatic with late
# loads; call 26: 0 programmatic but after attention, 3 full), alternating; ABLATES: VELLUM_CUDA_ABLATE values.
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
[ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
for r in ${RUNS:-1 2}; do for A in ${ABLATES:-0}; do for P in ${MODES:-0 3}; do
  G=$O/pdl-$P-$r-$A.log
  VELLUM_CUDA_ABLATE=$A VELLUM_CUDA_DET16_PDL=$P VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --deterministic ${B1:---batch1-only} --model /tmp/l8b-BF16.gguf > $G 2>&1
  echo "det16 PDL=$P ablate $A run $r (exit $?): b1 $(grep 'decode batch 1' $G | sed -E 's/.*\[(graphs [^]]*)\]: ([0-9.]+) tok.*/\1 \2/' | sort -u | tr '\n' ';') $(grep -E '^decode 1 seq' $G | sed -E 's/^decode 1 seqs? x ([0-9k]+) context.*\[(graphs [a-z]+)\]: ([0-9.]+ ms)[^,]*, ([0-9.]+) tok.*/\1 \2 \4;/' | tr '\n' ' ')"
done; done; done
