"""`vellum serve` on a real chat model (Qwen2.5-Coder-0.5B-Instruct, fetched by scripts/fetch-models.sh; the
model is not in the repository and CI does not download it, so the test skips naming the path when it is
absent, like test_real_model.py; VELLUM_SKIP_REAL_MODELS=1 skips it too). References: llama.cpp's token ids
for the same GGUF (tests/data/llamacpp_reference) and the model's own chat template from the GGUF."""
import json
import os
import pathlib

import openai
import pytest

from server_util import Server

REPO = pathlib.Path(__file__).resolve().parents[2]
REF = json.loads((REPO / "tests/data/llamacpp_reference/qwen2.5-coder-0.5b-instruct-awq-q4_k_m.json").read_text())
MODEL = pathlib.Path(os.environ.get("VELLUM_MODELS_DIR", REPO / "models")) / REF["model"]["file"]


@pytest.fixture(scope="module")
def server(vellum):
    if os.environ.get("VELLUM_SKIP_REAL_MODELS") == "1":
        pytest.skip("VELLUM_SKIP_REAL_MODELS=1")
    if not MODEL.exists():
        pytest.skip(f"{MODEL} not found: run scripts/fetch-models.sh qwen2.5-coder-0.5b (not done in CI)")
    s = Server(vellum, MODEL, "-c", "1024", "--max-num-seqs", "4", "--alias", "qwen", startup_timeout=120)
    yield s
    assert s.stop() == 0


def test_greedy_completion_matches_llamacpp(server):
    case = next(c for c in REF["llama_cpp"]["cases"] if not c["special"])
    n = 12
    status, tok = server.post("/tokenize", {"prompt": case["prompt"]})
    assert status == 200 and tok["tokens"] == case["prompt_ids"]
    status, r = server.post("/v1/completions", {"prompt": case["prompt"], "max_tokens": n, "temperature": 0,
                                                "return_token_ids": True}, timeout=600)
    assert status == 200
    got, want = r["choices"][0]["token_ids"], case["generated_ids"][:n]
    # Equal up to the first near tie in llama.cpp's logits (where rounding may pick either token).
    ties = [i for i, gap in enumerate(case["top2_logit_gap"][:n]) if gap < 0.05]
    k = ties[0] if ties else n
    assert got[:k] == want[:k], (got, want)
    assert r["usage"]["prompt_tokens"] == len(case["prompt_ids"])


def test_chat_answers_with_the_gguf_template(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=600)
    r = client.chat.completions.create(model="qwen", temperature=0, max_tokens=5,
                                       messages=[{"role": "user", "content": "What is 2+2? Answer with one number."}])
    assert r.choices[0].message.content.strip() == "4" and r.choices[0].finish_reason == "stop"
    # usage agrees with /tokenize over the same messages, rendered with the GGUF's ChatML template (whose default
    # system message is Qwen's)
    status, tok = server.post("/tokenize", {"messages": [{"role": "user", "content": "What is 2+2? Answer with one number."}]})
    assert status == 200 and r.usage.prompt_tokens == tok["count"]
    assert tok["tokens"][0] == 151644  # <|im_start|>, a control token of Qwen's vocabulary
    status, text = server.post("/detokenize", {"tokens": tok["tokens"]})
    assert status == 200 and text["prompt"].startswith("system\nYou are Qwen"), text
