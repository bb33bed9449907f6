#!/usr/bin/env bash
# Usage: copy next to stripped `vellum`, `vellum_cuda_check`, lib/ and fixtures/ (a .devcarry folder)
# and run it there; logs go to $OUT. Raw output of the 2026-11-21 run: results/h200-r4-all.txt.
# Round-4 device run (16-bit KV, --gpu-memory-utilization): op checks incl. F16/BF16 KV, stories260K
# greedy (GPU default KV = F16) 4/4, graphs vs eager, pool sizing by utilization, then llama3-8b
# Q4_K_M decode at 1..256 seqs x 1k with F16 KV and the attention bandwidth bench (F32 and F16 KV).
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/o}; mkdir -p "$O"
export LD_LIBRARY_PATH="$D/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
V=$D/vellum; C=$D/vellum_cuda_check
nvidia-smi -L
timeout 150 "$C" 2>"$O/check.log" > "$O/check_table.txt"; echo "op check exit $?"; grep -E "KV|checks," "$O/check_table.txt"
T=$(mktemp -d)
"$V" gguf convert-llama2c "$D/fixtures/stories260K.bin" "$D/fixtures/tok512.bin" "$T/s.gguf" >/dev/null
python3 - "$V" "$T/s.gguf" "$D/fixtures/greedy-reference.json" <<'PY' 2>&1 | tee "$O/greedy.txt"
import json, subprocess, sys
vellum, model, ref = sys.argv[1:]
cases = json.load(open(ref))["cases"]
for kv in ("auto", "bf16", "f32"):
    ok = 0
    for c in cases:
        p = subprocess.run([vellum, "run", "-m", model, "-p", c["prompt"], "-n", "400", "--temp", "0", "--device", "cuda", "--kv-cache-dtype", kv], capture_output=True, text=True)
        good = p.returncode == 0 and p.stdout.startswith(c["expected_text"]); ok += good
        if not good: print("FAIL", kv, c["prompt"], p.stdout[:200], p.stderr[-300:])
    print([l for l in p.stderr.splitlines() if l.startswith("loaded")][-1:])
    print(f"stories260K greedy on the GPU, --kv-cache-dtype {kv}: {ok}/{len(cases)} match greedy-reference.json")
PY
timeout 60 "$C" --graphs "$T/s.gguf" 2>&1 | tail -3 | tee "$O/graphs.txt"
echo "--- sizing errors:"
"$V" run -m "$T/s.gguf" -p x -n 1 --device cuda --gpu-memory-utilization 0.002 2>&1 | tail -1
"$V" run -m "$T/s.gguf" -p x -n 1 --device cpu --kv-cache-dtype f16 2>&1 | tail -1
S=$SECONDS; "$V" gguf synth --preset llama3-8b --type Q4_K_M -o /tmp/l8b.gguf 2>&1 | tail -1; echo "synth: $((SECONDS-S)) s"
nvidia-smi --query-gpu=memory.total,memory.used --format=csv
timeout 200 "$C" --kv-dtype f16 --only-bench --model /tmp/l8b.gguf 2>"$O/decode.log" | tee "$O/decode_table.txt"
