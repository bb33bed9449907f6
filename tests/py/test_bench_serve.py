"""`vellum bench-serve` against a small mock OpenAI server written here (http.server, streaming SSE with
`data: [DONE]`): what it sends, the timings it derives from known delays, its workloads, bounds and errors."""
import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import run

TOKEN_DELAY = 0.02  # seconds between streamed tokens
FIRST_DELAY = 0.05  # before the first token


class MockOpenAI(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = []       # bodies of /v1/completions, shared across handler instances
    tokenize = True     # whether /tokenize exists
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def body(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        if self.path == "/tokenize" and self.tokenize:
            # One token per whitespace-separated word plus a BOS, like a word-level vocabulary.
            self.reply(200, {"count": len(self.body()["prompt"].split()) + 1})
            return
        if self.path != "/v1/completions":
            self.reply(404, {"error": {"message": "not found"}})
            return
        req = self.body()
        with self.lock:
            MockOpenAI.requests.append(req)
        if req.get("max_tokens", 0) > 1000:
            self.reply(400, {"error": {"message": "max_tokens too large"}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(obj):
            payload = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()

        time.sleep(FIRST_DELAY)
        n = req["max_tokens"]
        for i in range(n):
            if i:
                time.sleep(TOKEN_DELAY)
            event({"choices": [{"index": 0, "text": f" t{i}", "finish_reason": None}]})
        event({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
        event({"choices": [], "usage": {"prompt_tokens": len(req["prompt"].split()) + 1, "completion_tokens": n}})
        event(b"[DONE]")
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def mock_server():
    MockOpenAI.requests = []
    MockOpenAI.tokenize = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), MockOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def bench_serve(vellum, url, *args, check=True):
    return run(vellum, "bench-serve", "--url", url, *args, check=check)


def test_fixed_workload_timings(vellum, mock_server):
    p = bench_serve(vellum, mock_server, "--num-requests", "6", "--input-len", "20", "--output-len", "10",
                    "--json", "--max-concurrency", "3")
    j = json.loads(p.stdout)
    assert j["completed"] == 6 and j["failed"] == 0
    assert j["prompt_lengths"] == "exact (server /tokenize)"
    assert j["output_tokens"] == 60
    for req in MockOpenAI.requests:
        assert req["stream"] is True and req["ignore_eos"] is True and req["max_tokens"] == 10
        assert len(req["prompt"].split()) + 1 == 20  # exactly 20 tokens as the server counts them
    assert len(MockOpenAI.requests) == 6
    # The mock's delays bound what must be measured (plus scheduling noise on a loaded machine).
    assert FIRST_DELAY * 1000 <= j["ttft_ms"]["p50"] < FIRST_DELAY * 1000 + 150
    assert TOKEN_DELAY * 1000 * 0.9 <= j["itl_ms"]["p50"] < TOKEN_DELAY * 1000 + 40
    assert j["itl_ms"]["count"] == 6 * 9
    assert j["e2e_ms"]["p50"] >= (FIRST_DELAY + 9 * TOKEN_DELAY) * 1000
    assert j["worst_decode_gap_ms"] >= j["itl_ms"]["p99"]
    # 3 at a time, 6 requests of ≥ 0.23 s: two waves.
    assert j["wall_s"] >= 2 * (FIRST_DELAY + 9 * TOKEN_DELAY)
    assert j["output_tok_s"] == pytest.approx(60 / j["wall_s"], rel=1e-6)


def test_shared_prefix_and_approximate_lengths(vellum, mock_server):
    MockOpenAI.tokenize = False
    p = bench_serve(vellum, mock_server, "--workload", "shared-prefix", "--num-requests", "4", "--clients", "2",
                    "--prefix-len", "30", "--input-len", "5", "--output-len", "3", "--json")
    j = json.loads(p.stdout)
    assert j["completed"] == 4 and j["prompt_lengths"].startswith("approximate")
    prompts = [r["prompt"] for r in MockOpenAI.requests]
    prefix = " ".join(prompts[0].split()[:30])
    assert all(q.startswith(prefix + " ") for q in prompts)
    assert len({q[len(prefix):] for q in prompts}) == 4  # distinct suffixes
    assert all(len(q.split()) == 35 for q in prompts)


def test_long_prompt_workload_and_text_output(vellum, mock_server):
    p = bench_serve(vellum, mock_server, "--workload", "long-prompt", "--clients", "2", "--input-len", "8",
                    "--output-len", "20", "--long-len", "200", "--inject-at", "0.1")
    assert "steady decoders' worst gap:" in p.stdout
    assert "| TTFT " in p.stdout and "| ITL " in p.stdout and "| E2E " in p.stdout
    assert "warning: a steady decoder finished" not in p.stdout  # injected while both were decoding
    lengths = sorted(len(r["prompt"].split()) + 1 for r in MockOpenAI.requests)
    assert lengths == [8, 8, 200]
    # Decoders too short to still be running when the long prompt comes: the report says so.
    MockOpenAI.requests = []
    p = bench_serve(vellum, mock_server, "--workload", "long-prompt", "--clients", "2", "--input-len", "8",
                    "--output-len", "2", "--long-len", "50", "--inject-at", "0.3", "--json")
    assert json.loads(p.stdout)["overlapped"] is False


def test_staggered_rate_and_bounds(vellum, mock_server):
    t0 = time.monotonic()
    p = bench_serve(vellum, mock_server, "--num-requests", "50", "--rate", "5", "--arrivals", "staggered",
                    "--output-len", "2", "--input-len", "4", "--max-duration", "1.5", "--json")
    elapsed = time.monotonic() - t0
    j = json.loads(p.stdout)
    # 5 req/s for 1.5 s: requests at 0, 0.2, …, 1.4 s are sent, the rest are not.
    assert 7 <= len(MockOpenAI.requests) <= 8 and j["not_issued_before_deadline"] == 50 - len(MockOpenAI.requests)
    assert elapsed < 10


def test_errors(vellum, mock_server):
    p = bench_serve(vellum, mock_server, "--output-len", "2000", "--num-requests", "2", check=False)
    assert p.returncode == 1 and "no request completed (HTTP 400" in p.stderr
    p = bench_serve(vellum, "http://127.0.0.1:1", "--num-requests", "1", check=False)
    assert p.returncode == 1 and "no request completed (connection" in p.stderr
    p = bench_serve(vellum, "https://example.com", check=False)
    assert p.returncode == 1 and "https is not supported" in p.stderr
    p = bench_serve(vellum, mock_server, "--workload", "nope", check=False)
    assert p.returncode == 1 and "--workload 'nope'" in p.stderr
    p = bench_serve(vellum, mock_server, "--rate", "-2", check=False)
    assert p.returncode == 1 and "--rate -2" in p.stderr
    assert len(MockOpenAI.requests) == 2  # argument errors send nothing
