"""`vellum serve` bad input: every case gets an OpenAI-shaped error with the status DESIGN.md assigns
("Bad input"), the error names the field where there is one, and the server is healthy afterwards."""
import json

import pytest

from server_util import GEMMA2_TEMPLATE, Server

KEY = "sk-test-key"
CHAT = "/v1/chat/completions"
CMPL = "/v1/completions"
USER = [{"role": "user", "content": "Hi"}]


@pytest.fixture(scope="module")
def server(vellum, stories_gguf, fixtures):
    s = Server(vellum, stories_gguf, "--chat-template", fixtures / "chat-templates" / "templates" / GEMMA2_TEMPLATE,
               "--max-body-mib", "8", api_key=KEY)
    yield s
    assert s.stop() == 0


def cmpl(**kw):
    return {"prompt": "Once upon a time", "max_tokens": 4, **kw}


def chat(**kw):
    return {"messages": USER, "max_tokens": 4, **kw}


# (id, path, JSON body or raw bytes, extra headers, status, error type, param (None: not checked), message part)
CASES = [
    ("invalid-json", CMPL, b'{"prompt": ', {}, 400, "invalid_request_error", None, "not valid JSON"),
    ("body-not-object", CMPL, b"[1, 2]", {}, 400, "invalid_request_error", None, "JSON object"),
    ("empty-body", CMPL, b"", {}, 400, "invalid_request_error", None, "not valid JSON"),
    ("prompt-wrong-type", CMPL, cmpl(prompt=5), {}, 400, "invalid_request_error", "prompt", "string"),
    ("prompt-missing", CMPL, {"max_tokens": 4}, {}, 400, "invalid_request_error", "prompt", "required"),
    ("prompt-token-out-of-vocab", CMPL, cmpl(prompt=[1, 99999]), {}, 400, "invalid_request_error", "prompt", "vocabulary"),
    ("max-tokens-negative", CMPL, cmpl(max_tokens=-1), {}, 400, "invalid_request_error", "max_tokens", "[1,"),
    ("max-tokens-zero", CMPL, cmpl(max_tokens=0), {}, 400, "invalid_request_error", "max_tokens", "[1,"),
    ("max-tokens-huge", CMPL, cmpl(max_tokens=10**12), {}, 400, "invalid_request_error", "max_tokens", "context holds 512"),
    ("max-tokens-string", CMPL, cmpl(max_tokens="10"), {}, 400, "invalid_request_error", "max_tokens", "integer"),
    ("max-tokens-float", CMPL, cmpl(max_tokens=1.5), {}, 400, "invalid_request_error", "max_tokens", "integer"),
    ("n-zero", CMPL, cmpl(n=0), {}, 400, "invalid_request_error", "n", "[1,"),
    ("n-1000", CMPL, cmpl(n=1000), {}, 400, "invalid_request_error", "n", "[1,"),
    ("temperature-negative", CMPL, cmpl(temperature=-0.5), {}, 400, "invalid_request_error", "temperature", "[0, 2]"),
    ("temperature-string", CMPL, cmpl(temperature="hot"), {}, 400, "invalid_request_error", "temperature", "number"),
    ("top-p-above-1", CMPL, cmpl(top_p=1.5), {}, 400, "invalid_request_error", "top_p", "(0, 1]"),
    ("top-p-zero", CMPL, cmpl(top_p=0), {}, 400, "invalid_request_error", "top_p", "(0, 1]"),
    ("top-k-string", CMPL, cmpl(top_k="x"), {}, 400, "invalid_request_error", "top_k", "integer"),
    ("min-p-above-1", CMPL, cmpl(min_p=2), {}, 400, "invalid_request_error", "min_p", "[0, 1]"),
    ("frequency-penalty-3", CMPL, cmpl(frequency_penalty=3), {}, 400, "invalid_request_error", "frequency_penalty", "[-2, 2]"),
    ("presence-penalty-minus-3", CMPL, cmpl(presence_penalty=-3), {}, 400, "invalid_request_error", "presence_penalty", "[-2, 2]"),
    ("logit-bias-bad-key", CMPL, cmpl(logit_bias={"abc": 1}), {}, 400, "invalid_request_error", "logit_bias", "token ids"),
    ("logit-bias-out-of-vocab", CMPL, cmpl(logit_bias={"99999": 1}), {}, 400, "invalid_request_error", "logit_bias", "vocabulary"),
    ("logit-bias-value-200", CMPL, cmpl(logit_bias={"5": 200}), {}, 400, "invalid_request_error", "logit_bias", "[-100, 100]"),
    ("unknown-field", CMPL, cmpl(foo=1), {}, 400, "invalid_request_error", "foo", "Unrecognized request argument"),
    ("stop-100-strings", CMPL, cmpl(stop=[f"s{i}" for i in range(100)]), {}, 400, "invalid_request_error", "stop", "at most 16"),
    ("stop-number", CMPL, cmpl(stop=5), {}, 400, "invalid_request_error", "stop", "string"),
    ("stop-empty-string", CMPL, cmpl(stop=[""]), {}, 400, "invalid_request_error", "stop", "empty"),
    ("logprobs-50", CMPL, cmpl(logprobs=50), {}, 400, "invalid_request_error", "logprobs", "[0, 20]"),
    ("logprobs-bool-on-completions", CMPL, cmpl(logprobs=True), {}, 400, "invalid_request_error", "logprobs", "integer"),
    ("seed-string", CMPL, cmpl(seed="7"), {}, 400, "invalid_request_error", "seed", "integer"),
    ("best-of-not-n", CMPL, cmpl(best_of=3), {}, 400, "invalid_request_error", "best_of", "equal"),
    ("stream-options-without-stream", CMPL, cmpl(stream_options={"include_usage": True}), {}, 400, "invalid_request_error",
     "stream_options", "stream"),
    ("prompt-longer-than-context", CMPL, cmpl(prompt="hello " * 600), {}, 400, "invalid_request_error", "prompt",
     "maximum context length is 512"),
    ("invalid-utf8", CMPL, b'{"prompt": "\xff\xfe abc", "max_tokens": 4}', {}, 400, "invalid_request_error", None, "UTF-8"),
    ("body-20mb", CMPL, json.dumps(cmpl(prompt="a" * (20 << 20))).encode(), {}, 413, "invalid_request_error", None, "limit"),
    ("wrong-api-key", CMPL, cmpl(), {"Authorization": "Bearer nope"}, 401, "authentication_error", None, "API key"),
    ("missing-api-key", CMPL, cmpl(), {"Authorization": ""}, 401, "authentication_error", None, "API key"),
    ("unknown-model", CMPL, cmpl(model="gpt-9"), {}, 404, "invalid_request_error", "model", "gpt-9"),
    ("unknown-route", "/v1/engines", cmpl(), {}, 404, "invalid_request_error", None, "/v1/engines"),
    ("chat-empty-messages", CHAT, chat(messages=[]), {}, 400, "invalid_request_error", "messages", "at least one"),
    ("chat-messages-not-array", CHAT, chat(messages="hi"), {}, 400, "invalid_request_error", "messages", "array"),
    ("chat-unknown-role", CHAT, chat(messages=[{"role": "wizard", "content": "hi"}]), {}, 400, "invalid_request_error",
     "messages[0].role", "wizard"),
    ("chat-missing-content", CHAT, chat(messages=[{"role": "user"}]), {}, 400, "invalid_request_error", "messages[0].content",
     "required"),
    ("chat-template-raises-on-system", CHAT, chat(messages=[{"role": "system", "content": "Be brief."}] + USER), {}, 400,
     "invalid_request_error", "messages", "System role not supported"),
    ("chat-roles-must-alternate", CHAT, chat(messages=USER + USER), {}, 400, "invalid_request_error", "messages", "alternate"),
    ("chat-image-part", CHAT, chat(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]),
     {}, 400, "invalid_request_error", "messages[0].content", "image_url"),
    ("chat-top-logprobs-without-logprobs", CHAT, chat(top_logprobs=2), {}, 400, "invalid_request_error", "top_logprobs", "logprobs"),
    ("chat-top-logprobs-99", CHAT, chat(logprobs=True, top_logprobs=99), {}, 400, "invalid_request_error", "top_logprobs", "[0, 20]"),
    ("chat-response-format-json", CHAT, chat(response_format={"type": "json_object"}), {}, 400, "invalid_request_error",
     "response_format", "text"),
    ("chat-prompt-field", CHAT, chat(prompt="x"), {}, 400, "invalid_request_error", "prompt", "Unrecognized"),
    ("chat-max-completion-tokens-negative", CHAT, chat(max_completion_tokens=-5), {}, 400, "invalid_request_error",
     "max_completion_tokens", "[1,"),
    ("tokenize-wrong-type", "/tokenize", {"prompt": 5}, {}, 400, "invalid_request_error", "prompt", "string"),
    ("detokenize-negative-id", "/detokenize", {"tokens": [-1]}, {}, 400, "invalid_request_error", "tokens", "token ids"),
]


def test_the_table_is_large_enough():
    assert len(CASES) >= 30
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(server, case):
    _, path, body, headers, status, err_type, param, message = case
    raw = body if isinstance(body, bytes) else None
    got_status, got = server.post(path, None if raw is not None else body, raw=raw, headers=headers)
    assert got_status == status, got
    assert isinstance(got, dict) and set(got["error"]) == {"message", "type", "param", "code"}, got
    assert got["error"]["type"] == err_type, got
    if param is not None:
        assert got["error"]["param"] == param, got
    assert message in got["error"]["message"], got
    assert server.get("/health")[0] == 200
    # and it still serves a real request
    st, ok = server.post(CMPL, cmpl(max_tokens=2, temperature=0))
    assert st == 200 and ok["usage"]["completion_tokens"] >= 1, ok


def test_health_needs_no_key_but_models_does(server):
    assert server.get("/health", headers={"Authorization": ""})[0] == 200
    st, body = server.get("/v1/models", headers={"Authorization": ""})
    assert st == 401 and body["error"]["code"] == "invalid_api_key"
    st, body = server.get("/metrics", headers={"Authorization": "Bearer wrong"})
    assert st == 401


WEIRD = [None, True, False, -1, 0, 1, 2**31, 2**64, -2**63, 1e308, -1e-308, 0.5, "", "x", "\u0000", "é" * 3, [], [1], ["a"],
         [None], {}, {"a": 1}, {"1": "x"}, [[1]], "<start_of_turn>", [{"role": "user"}], [{"role": "user", "content": None}]]
FIELDS = ["prompt", "messages", "max_tokens", "max_completion_tokens", "n", "stop", "seed", "temperature", "top_p", "top_k",
          "min_p", "logit_bias", "logprobs", "top_logprobs", "stream", "stream_options", "echo", "ignore_eos", "min_tokens",
          "frequency_penalty", "presence_penalty", "repetition_penalty", "stop_token_ids", "tools", "response_format",
          "chat_template_kwargs", "model", "best_of", "return_token_ids"]


def test_random_field_values_never_crash_or_500(server):
    """300 requests with random odd values in random fields: each answers 200 or an OpenAI-shaped 4xx, never 500."""
    import random
    rng = random.Random(1234)
    for i in range(300):
        path = rng.choice([CMPL, CHAT])
        body = cmpl() if path == CMPL else chat()
        for field in rng.sample(FIELDS, rng.randint(1, 3)):
            body[field] = rng.choice(WEIRD)
        status, got = server.post(path, body)
        assert status == 200 or (400 <= status < 500 and isinstance(got, dict) and "error" in got), (body, status, got)
    assert server.get("/health")[0] == 200
