"""Starts and stops `vellum serve` for the end-to-end tests: a free port chosen by the server itself
(--port 0, read back from its startup line), readiness via /health, and a stop that checks the exit code."""
import atexit
import json
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

GEMMA2_TEMPLATE = "google-gemma-2-2b-it.jinja"  # a real template that refuses system messages


class Server:
    def __init__(self, vellum, model, *extra, api_key=None, startup_timeout=60):
        args = [str(vellum), "serve", "-m", str(model), "--port", "0", "-t", "2", *map(str, extra)]
        if api_key:
            args += ["--api-key", api_key]
        self.api_key = api_key
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        atexit.register(self._kill)  # a failed test never leaves a server behind
        self.log = []
        self.url = None
        ready = threading.Event()

        def pump():  # keeps stderr drained (and remembered) for the whole life of the server
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"listening on (http://[\d.]+:\d+)", line)
                if m:
                    self.url = m.group(1)
                    ready.set()
            ready.set()

        self.pump = threading.Thread(target=pump, daemon=True)
        self.pump.start()
        ready.wait(startup_timeout)
        if not self.url:
            self.proc.kill()
            raise AssertionError("vellum serve did not start:\n" + "".join(self.log))
        deadline = time.time() + startup_timeout
        while time.time() < deadline:
            try:
                if self.get("/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("vellum serve never became healthy:\n" + "".join(self.log))

    @property
    def base_url(self):
        return self.url + "/v1"

    def request(self, method, path, body=None, headers=None, raw=None, timeout=120):
        """(status, parsed JSON or text) of one request; raw bytes go out unchanged."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = {"Content-Type": "application/json"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        h.update(headers or {})
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def metrics(self):
        """{name: value} of the unlabelled Prometheus samples."""
        status, text = self.get("/metrics")
        assert status == 200
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def wait_kv_idle(self, timeout=20):
        """Polls /metrics until no KV block is in use; returns the last metrics."""
        deadline = time.time() + timeout
        while True:
            m = self.metrics()
            if m["vellum:kv_blocks_used"] == 0 and m["vellum:http_requests_in_flight"] == 0:
                return m
            if time.time() > deadline:
                return m
            time.sleep(0.1)

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Signals the server and returns its exit code (it must exit within `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("vellum serve did not exit after the signal:\n" + "".join(self.log[-30:]))
        self.pump.join(5)
        return rc
