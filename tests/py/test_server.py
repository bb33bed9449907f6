"""`vellum serve` end to end with the official openai client, on stories260K (converted at test time)
with a real chat template (Gemma 2's, from the fixtures). References: llama2.c's run.c greedy output,
the server's own /tokenize, and the OpenAI API's documented response shapes."""
import json
import math

import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from server_util import GEMMA2_TEMPLATE, Server

USER = [{"role": "user", "content": "Tell me a story about a cat."}]


@pytest.fixture(scope="module")
def server(vellum, stories_gguf, fixtures):
    s = Server(vellum, stories_gguf, "--chat-template", fixtures / "chat-templates" / "templates" / GEMMA2_TEMPLATE,
               "--alias", "stories")
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=120)


def test_health_and_models(server, client):
    assert server.get("/health") == (200, {"status": "ok"})
    models = client.models.list()
    assert [m.id for m in models.data] == ["stories"]


def test_greedy_completion_reproduces_run_c(client, fixtures):
    ref = json.loads((fixtures / "stories260K" / "greedy-reference.json").read_text())
    for case in ref["cases"]:
        r = client.completions.create(model="stories", prompt=case["prompt"], max_tokens=100, temperature=0)
        full = case["prompt"] + r.choices[0].text
        n = min(len(full), len(case["expected_text"]))
        assert n > len(case["prompt"]) + 20
        assert full[:n] == case["expected_text"][:n], (case["prompt"], full[:300])
        assert r.object == "text_completion" and r.choices[0].finish_reason in ("stop", "length")


def test_streaming_completion_equals_non_streaming(client):
    kw = dict(model="stories", prompt="Once upon a time", max_tokens=60, temperature=0)
    whole = client.completions.create(**kw)
    chunks = list(client.completions.create(stream=True, stream_options={"include_usage": True}, **kw))
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == whole.choices[0].text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == whole.choices[0].finish_reason
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens


def test_chat_streaming_and_not(client, server):
    whole = client.chat.completions.create(model="stories", messages=USER, max_tokens=40, temperature=0)
    assert whole.object == "chat.completion"
    msg = whole.choices[0].message
    assert msg.role == "assistant" and len(msg.content) > 0
    chunks = list(client.chat.completions.create(model="stories", messages=USER, max_tokens=40, temperature=0, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == msg.content
    assert chunks[-1].choices[0].finish_reason == whole.choices[0].finish_reason
    # usage agrees with /tokenize over the same messages (the template rendered the same way)
    st, tok = server.post("/tokenize", {"messages": USER})
    assert st == 200 and whole.usage.prompt_tokens == tok["count"] == len(tok["tokens"])


def test_n_choices(client):
    r = client.completions.create(model="stories", prompt="The dog", max_tokens=20, n=3, temperature=1.0, seed=11)
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    assert len({c.text for c in r.choices}) >= 2  # independent samples
    chunks = list(client.chat.completions.create(model="stories", messages=USER, max_tokens=10, n=3, temperature=1.0,
                                                 seed=3, stream=True))
    finished = {c.choices[0].index for c in chunks if c.choices and c.choices[0].finish_reason}
    assert finished == {0, 1, 2}


def test_seed_reproduces(client):
    kw = dict(model="stories", prompt="The cat", max_tokens=40, temperature=1.0)
    a = client.completions.create(seed=7, **kw).choices[0].text
    b = client.completions.create(seed=7, **kw).choices[0].text
    c = client.completions.create(seed=8, **kw).choices[0].text
    assert a == b and a != c


def test_stop_string(client):
    base = client.completions.create(model="stories", prompt="Once upon a time", max_tokens=60, temperature=0).choices[0].text
    words = base.split()
    stop = " " + words[len(words) // 2]  # a word in the middle, with the space before it
    cut = base.index(stop)
    r = client.completions.create(model="stories", prompt="Once upon a time", max_tokens=60, temperature=0,
                                  stop=[stop, "zzzz-never"])
    assert r.choices[0].text == base[:cut] and r.choices[0].finish_reason == "stop"
    s = list(client.completions.create(model="stories", prompt="Once upon a time", max_tokens=60, temperature=0, stop=stop,
                                       stream=True))
    assert "".join(c.choices[0].text for c in s) == base[:cut]


def test_usage_agrees_with_tokenize_and_token_ids(server):
    prompt = "Lily wanted to play with the ball"
    st, tok = server.post("/tokenize", {"prompt": prompt})
    assert st == 200
    st, r = server.post("/v1/completions", {"prompt": prompt, "max_tokens": 25, "temperature": 0, "return_token_ids": True,
                                            "ignore_eos": True})
    assert st == 200
    u = r["usage"]
    assert u["prompt_tokens"] == tok["count"] and r["prompt_token_ids"] == tok["tokens"]
    assert u["completion_tokens"] == len(r["choices"][0]["token_ids"]) == 25
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    assert r["choices"][0]["finish_reason"] == "length"
    st, de = server.post("/detokenize", {"tokens": r["choices"][0]["token_ids"]})
    assert st == 200 and de["prompt"].strip() == r["choices"][0]["text"].strip()


def test_cached_tokens_on_repeated_prefix(client):
    prefix = "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. " * 2
    first = client.completions.create(model="stories", prompt=prefix + "One day", max_tokens=4, temperature=0)
    again = client.completions.create(model="stories", prompt=prefix + "The next day", max_tokens=4, temperature=0)
    assert first.usage.prompt_tokens >= 32
    assert again.usage.prompt_tokens_details.cached_tokens >= 16
    assert again.usage.prompt_tokens_details.cached_tokens < again.usage.prompt_tokens


def test_max_tokens_and_ignore_eos(client):
    r = client.completions.create(model="stories", prompt="Hi", max_tokens=7, temperature=0, extra_body={"ignore_eos": True})
    assert r.usage.completion_tokens == 7 and r.choices[0].finish_reason == "length"


def test_logprobs_well_formed_completions(client):  # needs the engine branch (Request::logprobs)
    r = client.completions.create(model="stories", prompt="Once upon a time", max_tokens=8, temperature=0, logprobs=3,
                                  extra_body={"ignore_eos": True})
    lp = r.choices[0].logprobs
    assert lp is not None and len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == 8
    assert "".join(lp.tokens).replace("\u2581", " ").strip() != ""
    for tok, lpv, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert lpv <= 0 and math.isfinite(lpv)
        assert 1 <= len(top) <= 3
        assert lpv >= max(top.values()) - 1e-4  # greedy: the chosen token is the most likely one
        assert all(v <= 0 for v in top.values())


def test_logprobs_well_formed_chat(client):  # needs the engine branch (Request::logprobs)
    r = client.chat.completions.create(model="stories", messages=USER, max_tokens=6, temperature=0, logprobs=True,
                                       top_logprobs=2, extra_body={"ignore_eos": True})
    content = r.choices[0].logprobs.content
    assert len(content) == 6
    for item in content:
        assert item.logprob <= 0 and len(item.top_logprobs) == 2
        assert item.top_logprobs[0].logprob >= item.top_logprobs[1].logprob
        assert bytes(item.bytes) == item.token.encode("utf-8", errors="surrogateescape") or item.bytes


def test_penalties_change_greedy_output(client):  # needs the engine branch (penalties, logit_bias)
    kw = dict(model="stories", prompt="Once upon a time", max_tokens=60, temperature=0)
    plain = client.completions.create(**kw).choices[0].text
    penalized = client.completions.create(frequency_penalty=2.0, **kw).choices[0].text
    assert plain != penalized
    st = client.completions.create(max_tokens=5, model="stories", prompt="Once upon a time", temperature=0,
                                   logit_bias={"100": 100}, extra_body={"return_token_ids": True, "ignore_eos": True})
    assert st.choices[0].model_extra["token_ids"] == [100] * 5


def test_metrics_after_requests(server):
    for _ in range(2):  # a repeated prompt: the second is a prefix-cache hit
        assert server.post("/v1/completions", {"prompt": "Once upon a time, " * 8, "max_tokens": 4})[0] == 200
    m = server.wait_kv_idle()
    assert m["vellum:kv_blocks_used"] == 0
    assert m["vellum:kv_blocks_total"] > 0 and m["vellum:kv_blocks_free"] == m["vellum:kv_blocks_total"]
    assert m["vellum:prompt_tokens_total"] > 0 and m["vellum:generation_tokens_total"] > 0
    assert m["vellum:time_to_first_token_seconds_count"] > 0
    assert m["vellum:inter_token_latency_seconds_count"] > 0
    assert 0 < m["vellum:prefix_cache_hit_rate"] <= 1
    assert m["vellum:engine_prompt_tokens_total"] > 0 and m["vellum:engine_generation_tokens_total"] > 0
    assert 0 < m["vellum:engine_cached_prompt_tokens_total"] < m["vellum:engine_prompt_tokens_total"]
    assert m["vellum:num_requests_running"] == 0 and m["vellum:num_requests_waiting"] == 0
    for name in ("vellum:num_requests_running", "vellum:num_requests_waiting", "vellum:num_preemptions_total",
                 "vellum:kv_blocks_cached"):
        assert name in m


def test_metrics_parse_as_prometheus_text(server):
    """The official Prometheus client's parser reads /metrics; histograms are cumulative and consistent."""
    assert server.post("/v1/completions", {"prompt": "Hi", "max_tokens": 5, "ignore_eos": True})[0] == 200
    status, text = server.get("/metrics")
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in ("vellum:time_to_first_token_seconds", "vellum:inter_token_latency_seconds"):
        f = families[name]
        assert f.type == "histogram"
        buckets = [(s.labels["le"], s.value) for s in f.samples if s.name == name + "_bucket"]
        counts = [v for _, v in buckets]
        assert buckets[-1][0] == "+Inf" and counts == sorted(counts)
        count = next(s.value for s in f.samples if s.name == name + "_count")
        assert counts[-1] == count > 0
    assert families["vellum:kv_blocks_total"].type == "gauge"
    assert families["vellum:request"].type == "counter"  # vellum:request_total
    # Where the engine thread's time went (counters by part; forward includes device_wait, 0 on the CPU).
    parts = {s.labels["part"]: s.value for s in families["vellum:engine_step_seconds"].samples}
    assert set(parts) == {"schedule", "forward", "device_wait", "sample", "deliver"}
    assert parts["forward"] > 0 and parts["device_wait"] == 0 and min(parts.values()) >= 0
    assert families["vellum:engine_steps"].samples[0].value >= 5
