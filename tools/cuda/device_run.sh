#!/usr/bin/env bash
# Runs the GPU checks and timings on a machine with an NVIDIA GPU, from a folder $D holding the
# built `vellum` and `vellum_cuda_check` (plus any shared libraries the machine lacks, in $D/lib)
# and the stories260K fixtures in $D/fixtures. Logs go to $OUT (default ./cuda-out).
#   tools/cuda/device_run.sh DIR check            # op checks + stories260K greedy on the GPU + timings
#   tools/cuda/device_run.sh DIR decode TYPE...   # synthesize llama3-8b in each TYPE and time decode
#                                                 # (CHECK_ARGS=--deterministic: the batch-invariant mode)
#   tools/cuda/device_run.sh DIR compare PRESET... # greedy CPU vs GPU on synthetic F16 models
# Each mode also checks CUDA graph replay against the eager path (vellum_cuda_check --graphs).
set -u -o pipefail
D=$(cd "$1" && pwd)
MODE=${2:-check}
shift 2 || true
OUT=${OUT:-$PWD/cuda-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V="$D/vellum"
C="$D/vellum_cuda_check"
nvidia-smi -L
ldd --version | head -1

if [ "$MODE" = check ]; then
  "$C" --bench 2>"$OUT/check.log" | tee "$OUT/check_table.txt"
  echo "check exit: $?"
  TMP=$(mktemp -d)
  "$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$TMP/s.gguf" >/dev/null
  python3 - "$V" "$TMP/s.gguf" "$D/fixtures/greedy-reference.json" <<'EOF' 2>&1 | tee "$OUT/greedy.txt"
import json, subprocess, sys
vellum, model, ref = sys.argv[1:]
cases = json.load(open(ref))["cases"]
ok = 0
for c in cases:
    for dev in ("cuda", "cpu"):
        p = subprocess.run([vellum, "run", "-m", model, "-p", c["prompt"], "-n", "400", "--temp", "0", "--device", dev],
                           capture_output=True, text=True)
        good = p.returncode == 0 and p.stdout.startswith(c["expected_text"])
        ok += good and dev == "cuda"
        print(f"stories260K greedy --device {dev} {c['prompt']!r}: {'PASS' if good else 'FAIL'}")
        if not good:
            print("  got:", p.stdout[:300].replace("\n", " "), "|", p.stderr[-300:])
        elif dev == "cuda":
            print("  ", [l for l in p.stderr.splitlines() if "tok/s" in l][-1:])
print(f"stories260K greedy on the GPU: {ok}/{len(cases)} match greedy-reference.json")
EOF
  # CUDA graph replay vs eager, bit for bit, on stories260K (F32 weights)
  "$C" --graphs "$TMP/s.gguf" 2>>"$OUT/graphs.log" | tee -a "$OUT/graphs_table.txt"
elif [ "$MODE" = compare ]; then  # greedy CPU vs GPU on a synthetic model of each preset given
  for P in "$@"; do
    "$V" gguf synth --preset "$P" --type F16 -o "/tmp/$P.gguf" 2>&1 | tail -1
    "$C" --compare "/tmp/$P.gguf" --graphs "/tmp/$P.gguf" 2>>"$OUT/compare.log" | tee -a "$OUT/compare_table.txt"
  done
elif [ "$MODE" = decode ]; then
  ARGS=()
  GRAPHS=()
  for T in "$@"; do
    [ -f "/tmp/l8b-$T.gguf" ] || { S=$SECONDS; "$V" gguf synth --preset llama3-8b --type "$T" -o "/tmp/l8b-$T.gguf" 2>&1 | tail -1; echo "synth $T: $((SECONDS - S)) s"; }
    ARGS+=(--model "/tmp/l8b-$T.gguf")
    GRAPHS+=(--graphs "/tmp/l8b-$T.gguf")  # graph replay vs eager, bit for bit, before the timings
  done
  # CHECK_ARGS=--deterministic times the batch-invariant mode
  "$C" ${CHECK_ARGS:-} "${GRAPHS[@]}" --only-bench "${ARGS[@]}" 2>>"$OUT/decode.log" | tee -a "$OUT/decode_table.txt"
fi
