#!/usr/bin/env python3
"""Records llama.cpp's greedy continuations of a few prompts on a real GGUF model, and vellum's.

Writes tests/data/llamacpp_reference/<model file stem>.json: for each prompt, llama.cpp's prompt token
ids, its greedy (argmax) continuation of up to --n-predict tokens (an end-of-generation token, when it
comes, is the last id), the continuation's text and, at every step, the gap between llama.cpp's two
largest logits (a small gap marks a near tie, where a different but correct float summation order may
pick the other token). With --vellum it also runs `vellum run --temp 0 --print-token-ids` on the same
prompts and records vellum's ids, text, time and where it first differs from llama.cpp; at such a
divergence it runs tools/ref_forward_gguf.py (a float64 numpy forward, activations never quantized) on
the common prefix and records which of the two tokens the exact arithmetic prefers.

llama.cpp comes from PyPI's llama-cpp-python, which compiles it from source; on these machines build it
with AMX off (AMX dies with an illegal instruction here):

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \\
      CMAKE_BUILD_PARALLEL_LEVEL=2 python3 -m venv /tmp/llamavenv && /tmp/llamavenv/bin/pip install llama-cpp-python numpy

Run (models fetched by scripts/fetch-models.sh):

    /tmp/llamavenv/bin/python tools/gen_llamacpp_reference.py models/qwen2.5-coder-0.5b-instruct-awq-q4_k_m.gguf \\
        --vellum build/vellum --llama-cpp-commit 0c1e570...
    # refresh only vellum's half (no llama.cpp needed):
    python3 tools/gen_llamacpp_reference.py models/X.gguf --vellum build/vellum --vellum-only
    # redo only the float64 arbitration of recorded divergences:
    python3 tools/gen_llamacpp_reference.py models/X.gguf --arbitrate-only

tests/py/test_real_model.py replays the prompts through vellum and compares with llama.cpp's ids.
"""
import argparse
import hashlib
import json
import os
import pathlib
import platform
import re
import subprocess
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "tests" / "data" / "llamacpp_reference"

# Plain completions, and one chat turn written with the model's special tokens (parsed as such on
# both sides: llama.tokenize(special=True), vellum run --special), in the model's own chat format.
PROMPTS = [
    {"prompt": "def fibonacci(n):", "special": False},
    {"prompt": "The capital of France is", "special": False},
    {"prompt": "# Quicksort in Python\n\ndef quicksort(arr):\n", "special": False},
]
CHAT_PROMPTS = {
    "qwen2": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
             "Write a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
    "gemma3": "<start_of_turn>user\nWrite a haiku about the sea.<end_of_turn>\n<start_of_turn>model\n",
}


def prompts_for(arch: str):
    chat = CHAT_PROMPTS.get(arch)
    return PROMPTS + ([{"prompt": chat, "special": True}] if chat else [])


def sha256_of(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def first_divergence(a, b):
    """Index of the first position where the lists differ (a shorter list differs where it ends); None if equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def run_llamacpp(model: pathlib.Path, n_predict: int, threads: int, commit: str | None) -> dict:
    import ctypes

    import llama_cpp
    import numpy as np

    llm = llama_cpp.Llama(
        model_path=str(model), n_ctx=512, n_batch=512, n_threads=threads, n_threads_batch=threads,
        logits_all=False, verbose=False,
    )
    vocab = llm._model.vocab
    n_vocab = llm.n_vocab()
    arch = llm.metadata.get("general.architecture", "")
    cases = []
    for p in prompts_for(arch):
        ids = llm.tokenize(p["prompt"].encode(), add_bos=True, special=p["special"])  # BOS only if the vocab asks
        llm.reset()
        llm.eval(ids)
        generated, margins = [], []
        t0 = time.perf_counter()
        for _ in range(n_predict):
            ptr = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
            logits = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()
            top2 = np.argpartition(-logits, 2)[:2]
            tok = int(np.argmax(logits))  # first maximum, as llama.cpp's greedy sampler picks
            margins.append(round(float(abs(logits[top2[0]] - logits[top2[1]])), 4))
            generated.append(tok)
            if llama_cpp.llama_vocab_is_eog(vocab, tok):
                break
            llm.eval([tok])
        secs = time.perf_counter() - t0
        text_ids = [t for t in generated if not llama_cpp.llama_vocab_is_eog(vocab, t)]
        cases.append({
            "prompt": p["prompt"],
            "special": p["special"],
            "prompt_ids": [int(t) for t in ids],
            "generated_ids": generated,
            "stopped_on_eog": bool(generated) and bool(llama_cpp.llama_vocab_is_eog(vocab, generated[-1])),
            "text": llm._model.detokenize(text_ids, special=False).decode("utf-8", errors="replace"),
            "top2_logit_gap": margins,
            "seconds": round(secs, 2),
        })
    return {
        "architecture": arch,
        "llama_cpp_python": llama_cpp.__version__,
        "llama_cpp_commit": commit,
        "system_info": llama_cpp.llama_print_system_info().decode(),
        "threads": threads,
        "sampling": "argmax of the last row's logits after each llama_decode (prompt in one batch, then one token per decode)",
        "cases": cases,
    }


class NotSupported(Exception):
    """vellum refuses the model (an architecture it does not implement yet)."""


IDS_RE = re.compile(r"^token ids: prompt \[([0-9,]*)\] generated \[([0-9,]*)\]$", re.M)


def parse_ids(s: str):
    return [int(x) for x in s.split(",")] if s else []


def run_vellum(vellum: pathlib.Path, model: pathlib.Path, prompt: str, special: bool, n_predict: int, threads: int):
    """Runs `vellum run` greedy; returns (prompt ids, generated ids, continuation text, seconds, stderr)."""
    cmd = [str(vellum), "run", "-m", str(model), "-p", prompt, "-n", str(n_predict), "--temp", "0",
           "-t", str(threads), "--print-token-ids"]
    if special:
        cmd.append("--special")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if p.returncode == 1 and "is not supported" in p.stderr:
        raise NotSupported(p.stderr.strip().splitlines()[-1])
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    m = IDS_RE.search(p.stderr)
    if not m:
        raise RuntimeError(f"no 'token ids:' line in vellum's stderr:\n{p.stderr}")
    out = p.stdout
    assert out.startswith(prompt) and out.endswith("\n"), out[:200]
    return parse_ids(m.group(1)), parse_ids(m.group(2)), out[len(prompt):-1], secs, p.stderr


def arbitrate(ref: dict, model: pathlib.Path):
    """Where vellum's continuation first differs from llama.cpp's, asks the float64 numpy forward
    (tools/ref_forward_gguf.py) which token the exact arithmetic picks after the common prefix."""
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from ref_forward_gguf import Model

    m = None
    for c, v in zip(ref["llama_cpp"]["cases"], ref["vellum"]["cases"]):
        d = v["first_divergence"]
        if d is None or d >= len(c["generated_ids"]) or d >= len(v["generated_ids"]):
            v.pop("float64_at_divergence", None)
            continue
        m = m or Model(str(model))
        row = m.forward(c["prompt_ids"] + c["generated_ids"][:d])[-1]
        top = [int(t) for t in (-row).argsort()[:2]]
        tv, tl = v["generated_ids"][d], c["generated_ids"][d]
        v["float64_at_divergence"] = {
            "argmax": top[0], "second": top[1], "gap": round(float(row[top[0]] - row[top[1]]), 4),
            "logit_of_vellum_token": round(float(row[tv]), 4), "logit_of_llamacpp_token": round(float(row[tl]), 4),
            "vellum_is_argmax": tv == top[0], "llamacpp_is_argmax": tl == top[0],
        }
        print(f"{model.name}: {c['prompt']!r}: float64 at step {d}: {v['float64_at_divergence']}", flush=True)


def vellum_commit() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=pathlib.Path)
    ap.add_argument("--n-predict", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vellum", type=pathlib.Path, help="also run this vellum binary and record its outputs")
    ap.add_argument("--vellum-only", action="store_true", help="keep the recorded llama.cpp half; rerun vellum only")
    ap.add_argument("--arbitrate-only", action="store_true",
                    help="keep both recorded halves; redo only the float64 arbitration of divergences")
    ap.add_argument("--llama-cpp-commit", help="the llama.cpp commit vendored by the llama-cpp-python build")
    ap.add_argument("--out-dir", type=pathlib.Path, default=OUT_DIR)
    a = ap.parse_args()

    out = a.out_dir / (a.model.name.removesuffix(".gguf") + ".json")
    if a.vellum_only or a.arbitrate_only:
        ref = json.loads(out.read_text())
        assert ref["model"]["sha256"] == sha256_of(a.model), "the model file is not the one the reference was made from"
    else:
        ref = {
            "model": {"file": a.model.name, "size": a.model.stat().st_size, "sha256": sha256_of(a.model),
                      "fetch": "scripts/fetch-models.sh"},
            "n_predict": a.n_predict,
            "llama_cpp": run_llamacpp(a.model, a.n_predict, a.threads, a.llama_cpp_commit),
        }
    if a.vellum:
        cases = []
        for c in ref["llama_cpp"]["cases"]:
            try:
                pids, gids, text, secs, stderr = run_vellum(a.vellum, a.model, c["prompt"], c["special"],
                                                            ref["n_predict"], a.threads)
            except NotSupported as e:
                print(f"{a.model.name}: vellum refuses it: {e}")
                ref["vellum"] = {"commit": vellum_commit(), "supported": False, "error": str(e)}
                break
            d = first_divergence(gids, c["generated_ids"])
            speed = re.search(r"prompt: .*", stderr)
            cases.append({
                "prompt_ids_match": pids == c["prompt_ids"],
                "generated_ids": gids,
                "text": text,
                "matches_llamacpp": pids == c["prompt_ids"] and d is None,
                "first_divergence": d,
                "llamacpp_top2_gap_at_divergence": (c["top2_logit_gap"][d] if d is not None and d < len(c["top2_logit_gap"])
                                                    else None),
                "seconds": round(secs, 1),
                "speed": speed.group(0) if speed else None,
            })
            print(f"{a.model.name}: {c['prompt']!r}: vellum {'matches' if cases[-1]['matches_llamacpp'] else 'DIFFERS'}"
                  f" (first divergence {d}, {secs:.1f} s)", flush=True)
        else:
            ref["vellum"] = {"commit": vellum_commit(), "supported": True, "host": platform.machine(),
                             "threads": a.threads, "cases": cases}
    if ref.get("vellum", {}).get("supported") and (a.vellum or a.arbitrate_only):
        arbitrate(ref, a.model)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(ref, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


if __name__ == "__main__":
    os.environ.setdefault("LLAMA_LOG_LEVEL", "error")
    main()
