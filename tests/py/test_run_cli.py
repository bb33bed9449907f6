"""`vellum run` end to end: text in, text out, on the converted stories260K, against llama2.c's run.c."""
import json

from conftest import run


def test_run_greedy_reproduces_run_c(vellum, fixtures, stories_gguf):
    ref = json.loads((fixtures / "stories260K" / "greedy-reference.json").read_text())
    for case in ref["cases"]:
        p = run(vellum, "run", "-m", stories_gguf, "-p", case["prompt"], "-n", "400", "--temp", "0", "-t", "2")
        # run.c stops after 160 positions; vellum continues, so its text starts with run.c's
        assert p.stdout.startswith(case["expected_text"]), (case["prompt"], p.stdout[:400])
        assert "generation:" in p.stderr and "tok/s" in p.stderr


def test_run_sampling_is_reproducible_with_a_seed(vellum, stories_gguf):
    a = run(vellum, "run", "-m", stories_gguf, "-p", "The cat", "-n", "40", "--temp", "1.0", "-s", "7").stdout
    b = run(vellum, "run", "-m", stories_gguf, "-p", "The cat", "-n", "40", "--temp", "1.0", "-s", "7").stdout
    c = run(vellum, "run", "-m", stories_gguf, "-p", "The cat", "-n", "40", "--temp", "1.0", "-s", "8").stdout
    assert a == b
    assert a != c


def test_run_rejects_bad_parameters(vellum, stories_gguf, tmp_path):
    p = run(vellum, "run", "-m", stories_gguf, "-p", "x", "--temp", "-1", check=False)
    assert p.returncode == 1 and "temperature" in p.stderr
    p = run(vellum, "run", "-m", stories_gguf, "-p", "x " * 600, check=False)
    assert p.returncode == 1 and "context holds 512" in p.stderr, p.stderr
    p = run(vellum, "run", "-m", tmp_path / "none.gguf", "-p", "x", check=False)
    assert p.returncode == 1 and "cannot open" in p.stderr
