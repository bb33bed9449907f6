#!/usr/bin/env python3
"""Prompt processing and generation speed of vellum vs llama.cpp on the same GGUF files and threads.

For each model and repetition, runs back to back (so both see the same machine load):
  - vellum: `vellum run -m MODEL -p PROMPT -n N --temp 0 -t T` and parses its speed line;
  - llama.cpp (llama-cpp-python): the same prompt tokenized by llama.cpp, evaluated in one batch
    (n_batch = n_ubatch = 512), then N greedy single-token decodes, timed with perf_counter.
Prints one line per run with the 1-minute load average, and a summary (best of the repetitions).
On a shared machine llama.cpp's OpenMP workers spin while they wait (its default); --omp-passive makes
them sleep, which is what keeps its decode speed sane when other processes compete for the cores.

    python3 tools/bench_cpu_vs_llamacpp.py --vellum build/vellum M1.gguf M2.gguf ...
"""
import argparse
import os
import re
import subprocess
import time

_SENTENCE = ("the quick brown fox jumps over the lazy dog while a small girl named Lily walks to the park with "
             "her mother and they see many birds singing in the tall green trees near the river ")
DEFAULT_PROMPT = (_SENTENCE * 20)[:2261]
SPEED_RE = re.compile(r"prompt: (\d+) tokens in ([0-9.]+) s .*generation: (\d+) tokens in ([0-9.]+) s")


def load():
    return os.getloadavg()[0]


def run_vellum(vellum, model, prompt, n, threads):
    p = subprocess.run([vellum, "run", "-m", model, "-p", prompt, "-n", str(n), "--temp", "0", "-t", str(threads)],
                       capture_output=True, text=True, check=True)
    m = SPEED_RE.search(p.stderr)
    if not m:
        raise RuntimeError(f"no speed line in vellum's stderr:\n{p.stderr[-2000:]}")
    return int(m.group(1)), int(m.group(1)) / float(m.group(2)), int(m.group(3)) / float(m.group(4))


def run_llamacpp(model, prompt, n, threads):
    import llama_cpp
    import numpy as np
    llm = llama_cpp.Llama(model_path=model, n_ctx=2048, n_batch=512, n_ubatch=512, n_threads=threads,
                          n_threads_batch=threads, verbose=False)
    toks = llm.tokenize(prompt.encode(), add_bos=True, special=False)
    t0 = time.perf_counter()
    llm.eval(toks)
    t1 = time.perf_counter()
    n_vocab = llm.n_vocab()
    for _ in range(n):  # greedy: argmax of the last row's logits
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))
        llm.eval([int(np.argmax(logits))])
    t2 = time.perf_counter()
    del llm
    return len(toks), len(toks) / (t1 - t0), n / (t2 - t1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--vellum", default="build/vellum")
    ap.add_argument("--prompt-file", help="prompt text (default: the sentence below repeated, 2261 "
                    "characters: 509 tokens with the llama-spm vocabulary, 456 with Qwen2.5's)")
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--skip-llamacpp", action="store_true")
    ap.add_argument("--omp-passive", action="store_true",
                    help="OMP_WAIT_POLICY=passive for llama.cpp: its OpenMP workers spin while waiting by "
                         "default, which collapses its decode speed when other processes share the cores")
    a = ap.parse_args()
    if a.omp_passive:
        os.environ["OMP_WAIT_POLICY"] = "passive"  # read when llama.cpp's OpenMP runtime starts
    prompt = open(a.prompt_file).read() if a.prompt_file else DEFAULT_PROMPT
    best = {}
    for rep in range(a.reps):
        for model in a.models:
            name = os.path.basename(model)
            runs = [("vellum", lambda: run_vellum(a.vellum, model, prompt, a.n, a.threads))]
            if not a.skip_llamacpp:
                runs.append(("llama.cpp", lambda: run_llamacpp(model, prompt, a.n, a.threads)))
            for who, fn in runs:
                l = load()
                ntok, pp, tg = fn()
                print(f"rep {rep} {name:32} {who:9} load {l:4.2f}: prompt {ntok} tok {pp:7.1f} tok/s, "
                      f"generation {a.n} tok {tg:6.2f} tok/s", flush=True)
                b = best.setdefault((name, who), [0.0, 0.0])
                b[0], b[1] = max(b[0], pp), max(b[1], tg)
    print("\nbest of", a.reps, "(tok/s)")
    for model in a.models:
        name = os.path.basename(model)
        v = best.get((name, "vellum"))
        l = best.get((name, "llama.cpp"))
        line = f"{name:32} vellum pp {v[0]:7.1f} tg {v[1]:6.2f}"
        if l:
            line += f" | llama.cpp pp {l[0]:7.1f} tg {l[1]:6.2f} | ratio pp {v[0] / l[0]:.2f} tg {v[1] / l[1]:.2f}"
        print(line)
    if not a.skip_llamacpp:  # the same, as the markdown table of docs/cpu_kernels.md
        print("\n| model | vellum prefill | llama.cpp prefill | ratio | vellum decode | llama.cpp decode | ratio |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for model in a.models:
            name = os.path.basename(model)
            v, l = best[(name, "vellum")], best[(name, "llama.cpp")]
            print(f"| {name} | {v[0]:.1f} tok/s | {l[0]:.1f} | {v[0] / l[0]:.2f} | {v[1]:.1f} tok/s | {l[1]:.1f} "
                  f"| {v[1] / l[1]:.2f} |")


if __name__ == "__main__":
    main()
