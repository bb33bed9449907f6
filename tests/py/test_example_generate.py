"""examples/generate.cpp (public API only) on stories260K against llama2.c's run.c greedy outputs."""
import json

from conftest import run


def test_example_generate_reproduces_run_c(vellum, fixtures, stories_gguf):
    example = vellum.parent / "vellum-generate"
    assert example.exists(), f"example binary not built at {example}"
    ref = json.loads((fixtures / "stories260K" / "greedy-reference.json").read_text())
    assert ref["cases"]
    for case in ref["cases"]:
        p = run(example, "-m", stories_gguf, "-p", case["prompt"], "-n", "400", "-t", "2")
        # run.c stops after 160 positions; the example continues, so its text starts with run.c's
        assert p.stdout.startswith(case["expected_text"]), (case["prompt"], p.stdout[:400])
        assert "finish: " in p.stderr


def test_example_generate_reports_errors(vellum, tmp_path):
    example = vellum.parent / "vellum-generate"
    p = run(example, "-m", tmp_path / "none.gguf", "-p", "x", check=False)
    assert p.returncode == 1 and "cannot open" in p.stderr, p.stderr
