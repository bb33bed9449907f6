#!/usr/bin/env python3
"""stories260K greedy on the GPU against llama2.c's run.c text (greedy-reference.json).

usage: stories_greedy.py VELLUM MODEL.gguf greedy-reference.json [extra `vellum run` args...]
Used by the device scripts beside it (run5.sh and the helpers' round scripts); copy it with them.
"""
import json
import subprocess
import sys

vellum, model, ref, *extra = sys.argv[1:]
cases = json.load(open(ref))["cases"]
ok = 0
for c in cases:
    p = subprocess.run([vellum, "run", "-m", model, "-p", c["prompt"], "-n", "400", "--temp", "0", "--device", "cuda", *extra],
                       capture_output=True, text=True)
    good = p.returncode == 0 and p.stdout.startswith(c["expected_text"])
    ok += good
    if not good:
        print("FAIL", c["prompt"], p.stdout[:200], p.stderr[-300:])
print(f"stories260K greedy on the GPU {' '.join(extra)}: {ok}/{len(cases)} match greedy-reference.json", flush=True)
sys.exit(0 if ok == len(cases) else 1)
