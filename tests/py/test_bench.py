"""`vellum bench` on stories260K: the grid it reports, its three output formats, the SVG plot and its
argument errors."""
import csv
import io
import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from gguf import GGUFReader

from conftest import run

COLUMNS = ["batch", "prompt", "generate", "reps", "prefill_tok_s", "prefill_sd", "decode_tok_s", "decode_sd",
           "steady_tok_s", "steady_sd", "ttft_ms", "ttft_sd", "peak_kv_mib"]


def bench(vellum, model, *args, check=True):
    return run(vellum, "bench", "-m", model, "-t", "2", "--device", "cpu", *args, check=check)


def test_json_grid(vellum, stories_gguf):
    p = bench(vellum, stories_gguf, "-p", "32,64", "-n", "8", "-b", "1,4", "-r", "2", "--json")
    j = json.loads(p.stdout)
    rows = j["results"]
    assert [(r["batch"], r["prompt"], r["generate"]) for r in rows] == [(1, 32, 8), (1, 64, 8), (4, 32, 8), (4, 64, 8)]
    for r in rows:
        assert set(r) == set(COLUMNS)
        assert r["reps"] == 2
        assert r["prefill_tok_s"] > 0 and r["decode_tok_s"] > 0 and r["steady_tok_s"] > 0 and r["ttft_ms"] > 0
        assert r["prefill_sd"] >= 0
    # Peak KV from the model's shape (read with the gguf package): F32 K and V of every layer per token;
    # 32 + 8 tokens fill 3 blocks of 16, 64 + 8 fill 5, and random prompts share nothing.
    reader = GGUFReader(stories_gguf)
    f = lambda k: int(reader.fields[k].parts[-1][0])
    heads, kv_heads, dim = f("llama.attention.head_count"), f("llama.attention.head_count_kv"), f("llama.embedding_length")
    per_token = f("llama.block_count") * 2 * kv_heads * (dim // heads) * 4
    kv = {(r["batch"], r["prompt"]): r["peak_kv_mib"] * 2**20 for r in rows}
    # The means are the means of the raw repetitions listed under "samples".
    for row, sample in zip(rows, j["samples"]):
        assert len(sample["decode_tok_s"]) == 2
        assert row["decode_tok_s"] == pytest.approx(sum(sample["decode_tok_s"]) / 2)
    # Sampled while running, so on a busy machine the very last block may be missed: whole blocks, never
    # more than the arithmetic allows, and (on an idle machine, always) exactly that.
    for key, most in (((1, 32), 3), ((1, 64), 5), ((4, 32), 12), ((4, 64), 20)):
        blocks = kv[key] / (16 * per_token)
        assert blocks == pytest.approx(round(blocks)) and most - 1 <= round(blocks) <= most, (key, blocks)


def test_table_and_csv(vellum, stories_gguf):
    p = bench(vellum, stories_gguf, "-p", "16", "-n", "4", "-b", "2", "-r", "1")
    lines = p.stdout.splitlines()
    header = next(l for l in lines if l.startswith("|"))
    assert [c.strip() for c in header.strip("|").split("|")] == COLUMNS
    assert "] 1/1" not in p.stderr  # no bar: stderr is not a TTY
    p = bench(vellum, stories_gguf, "-p", "16", "-n", "4", "-b", "1,2", "-r", "1", "--csv", "--progress")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [int(r["batch"]) for r in rows] == [1, 2] and float(rows[1]["decode_tok_s"]) > 0
    assert "[##############################] 2/2 done" in p.stderr  # --progress forces the bar


@pytest.mark.skipif(shutil.which("gnuplot") is None, reason="gnuplot-nox is installed by scripts/setup.sh")
def test_plot_svg(vellum, stories_gguf, tmp_path):
    out = tmp_path / "sweep.svg"
    bench(vellum, stories_gguf, "-p", "16", "-n", "4", "-b", "1,2,4", "-r", "1", "--plot", out)
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    text = out.read_text()
    assert "decode tok/s" in text and "p=16 n=4" in text


def test_bad_arguments(vellum, stories_gguf):
    p = bench(vellum, stories_gguf, "-b", "1,,8", check=False)
    assert p.returncode == 1 and "-b/--batch '1,,8': empty item" in p.stderr
    p = bench(vellum, stories_gguf, "-p", "500", "-n", "100", check=False)
    assert p.returncode == 1 and "exceed the model's context of 512 tokens" in p.stderr
    p = bench(vellum, stories_gguf, "--json", "--csv", check=False)
    assert p.returncode == 1 and "at most one of --json and --csv" in p.stderr
    p = bench(vellum, stories_gguf, "-r", "0", check=False)
    assert p.returncode != 0 and "repetitions" in p.stderr
    p = run(vellum, "bench", "--help")
    assert "not llama-bench's" in p.stdout and "--max-num-batched-tokens" in p.stdout


PROFILE = ["batch", "prompt", "generate", "steps", "step_ms", "schedule_ms", "forward_ms", "device_wait_ms", "sample_ms",
           "deliver_ms", "other_ms"]


def test_step_profile(vellum, stories_gguf):
    # --step-profile: the steps between the engine's counters when the last sequence got its first token
    # and when the first finished (read by the bench's reader threads, which may lag the engine on a
    # busy machine: at most the n - 1 steady steps), and where their time went, within the span.
    p = bench(vellum, stories_gguf, "-p", "16", "-n", "40", "-b", "1,8", "-r", "1", "--json", "--step-profile")
    j = json.loads(p.stdout)
    prof = j["step_profile"]
    assert [(r["batch"], r["prompt"], r["generate"]) for r in prof] == [(1, 16, 40), (8, 16, 40)]
    for r in prof:
        assert set(r) == set(PROFILE)
        assert 1 <= r["steps"] <= 40, r
        assert r["forward_ms"] > 0 and r["device_wait_ms"] == 0, r  # the CPU computes in the caller
        # The parts happen inside the span: the loop's remainder is not negative.
        assert min(r["schedule_ms"], r["sample_ms"], r["deliver_ms"]) >= 0 and r["other_ms"] >= -1e-3, r
    for r in j["results"]:
        assert r["steady_tok_s"] > 0
    text = bench(vellum, stories_gguf, "-p", "16", "-n", "8", "-b", "2", "-r", "1", "--step-profile").stdout
    assert "steady-state steps" in text and "deliver_ms" in text


def test_no_steady_span_reports_zero(vellum, stories_gguf):
    # One generated token each: every sequence finishes with its first token, so no step has all of
    # them decoding. (Also: the warm-up run stays within the context -p + -n sized.)
    j = json.loads(bench(vellum, stories_gguf, "-p", "16", "-n", "1", "-b", "4", "-r", "1", "--json", "--step-profile").stdout)
    assert j["results"][0]["steady_tok_s"] == 0
    assert j["step_profile"][0]["steps"] == 0
