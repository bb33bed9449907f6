"""`vellum bench-serve` against the real `vellum serve` on stories260K, shared-prefix workload: with the
prefix cache on the server reports cached prompt tokens, with it off none, and every request completes.
Needs the server (issue #7); skipped, with that reason, in a build without the `serve` command."""
import json
import os
import re
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import run


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_binary(vellum):
    # VELLUM_SERVE_BIN: another build's binary for `serve` (used before the server branch was merged).
    return os.environ.get("VELLUM_SERVE_BIN", str(vellum))


@pytest.fixture
def server(vellum, stories_gguf, request):
    binary = serve_binary(vellum)
    if not re.search(r"^  serve ", run(binary, "--help").stdout, re.M):
        pytest.skip("this vellum has no `serve` command (server branch not merged)")
    port = free_port()
    proc = subprocess.Popen([binary, "serve", "-m", str(stories_gguf), "-t", "2", "--device", "cpu", "--port",
                             str(port), *request.param], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("vellum serve did not come up: " + proc.stdout.read())
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def cached_tokens(url):
    text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    line = next(l for l in text.splitlines() if l.startswith("vellum:engine_cached_prompt_tokens_total"))
    return float(line.split()[-1])


@pytest.mark.parametrize("server,sharing", [([], True), (["--no-prefix-cache"], False)], indirect=["server"])
def test_shared_prefix_against_vellum_serve(vellum, server, sharing):
    p = run(vellum, "bench-serve", "--url", server, "--workload", "shared-prefix", "--prefix-len", "200",
            "--input-len", "8", "--output-len", "8", "--num-requests", "8", "--clients", "4", "--json")
    j = json.loads(p.stdout)
    assert j["completed"] == 8 and j["failed"] == 0, j["errors"]
    assert j["prompt_lengths"] == "exact (server /tokenize)"
    assert j["output_tokens"] == 64  # ignore_eos: exactly --output-len each
    assert j["ttft_ms"]["count"] == 8 and j["ttft_ms"]["p50"] > 0 and j["itl_ms"]["p50"] > 0
    cached = cached_tokens(server)
    if sharing:
        # At least the 4 requests of every wave after the first reuse most of the 200-token prefix.
        assert cached >= 4 * 150, cached
    else:
        assert cached == 0
