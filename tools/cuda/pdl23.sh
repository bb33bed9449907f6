#!/usr/bin/env bash
# Round 23: the deterministic mode's batch 1 and one sequence at 1k / 8k context (llama3-8b BF16), the few-row
# det16 kernel by VELLUM_CUDA_DET16_PDL (0: programmatic edges but after attention, the default since call 26; 1: all
# programmatic; 2: all programmatic, loads after the wait; 3: full edges, the default until call 26), alternating;
# ABLATES: VELLUM_CUDA_ABLATE values (15: the GEMVs only).
D=$(cd "$(dirname "$0")" && pwd); export OUT=${OUT:-/tmp/o}; O=$OUT; mkdir -p $O
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
[ -f /tmp/l8b-BF16.gguf ] || $V gguf synth --preset llama3-8b --type BF16 -o /tmp/l8b-BF16.gguf > /dev/null 2>&1
for r in ${RUNS:-1 2}; do for A in ${ABLATES:-0}; do for P in ${MODES:-0 3}; do
  G=$O/pdl-$P-$r-$A.log
  VELLUM_CUDA_ABLATE=$A VELLUM_CUDA_DET16_PDL=$P VELLUM_BENCH_QUICK=1 timeout 200 $C --only-bench --skip-op-bench --deterministic ${B1:---batch1-only} --model /tmp/l8b-BF16.gguf > $G 2>&1
  echo "det16 PDL=$P ablate $A run $r (exit $?): b1 $(grep 'decode batch 1' $G | sed -E 's/.*\[(graphs [^]]*)\]: ([0-9.]+) tok.*/\1 \2/' | sort -u | tr '\n' ';') $(grep -E '^decode 1 seq' $G | sed -E 's/^decode 1 seqs? x ([0-9k]+) context.*\[(graphs [a-z]+)\]: ([0-9.]+ ms)[^,]*, ([0-9.]+) tok.*/\1 \2 \4;/' | tr '\n' ' ')"
done; done; done
