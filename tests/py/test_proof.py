"""`vellum proof`: configuration pairs that must not change a single token id pass (stories260K and a
random synthetic model), and a pair that does differ fails with the divergence printed."""
import pathlib

import pytest

from conftest import run

SUITE = pathlib.Path(__file__).resolve().parents[1] / "data" / "proof" / "stories.txt"

# Pairs the engine promises are invisible in the output (issue #8): batch 1 vs 16, prefix cache on/off,
# chunk budgets, block sizes.
PAIRS = [
    ("--max-num-seqs 1", "--max-num-seqs 16"),
    ("--no-prefix-cache", ""),
    ("--max-num-batched-tokens 8 --max-prefill-chunk 3", "--max-num-batched-tokens 512"),
    ("--block-size 16", "--block-size 32 --no-prefix-cache --max-num-seqs 1"),
]


@pytest.fixture(scope="session")
def synth_gguf(vellum, fixtures, tmp_path_factory):
    vocab = fixtures / "tokenizers" / "ggml-vocab" / "ggml-vocab-llama-spm.gguf"
    out = tmp_path_factory.mktemp("synth") / "tiny-q8.gguf"
    run(vellum, "gguf", "synth", "--preset", "tiny", "--layers", "2", "--vocab", vocab, "-t", "Q8_0",
        "--seed", "3", "-o", out)
    return out


def proof(vellum, model, a, b, *extra, check=True):
    return run(vellum, "proof", "-m", model, "--prompts", SUITE, "-n", "24", "-t", "2", "--device", "cpu",
               "--a", a, "--b", b, *extra, check=check)


@pytest.mark.parametrize("a,b", PAIRS)
def test_pairs_identical_on_stories260k(vellum, stories_gguf, a, b):
    p = proof(vellum, stories_gguf, a, b)
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("proof: IDENTICAL: 10 prompts, "), p.stdout
    # The suite really generated something (an empty run would compare equal trivially).
    assert int(last.split(", ")[1].split()[0]) >= 100, last


@pytest.mark.parametrize("a,b", PAIRS[:2] + PAIRS[3:])
def test_pairs_identical_on_random_model(vellum, synth_gguf, a, b):
    p = proof(vellum, synth_gguf, a, b, "--ignore-eos")
    assert p.stdout.strip().splitlines()[-1] == "proof: IDENTICAL: 10 prompts, 240 generated tokens each side", p.stdout


def test_sampling_with_a_seed_is_identical(vellum, stories_gguf):
    p = proof(vellum, stories_gguf, "--max-num-seqs 1", "--max-num-seqs 16 --block-size 8", "--temp", "1.0", "-s", "5")
    assert "proof: IDENTICAL" in p.stdout.splitlines()[-1]


def test_rows_reduced_on_the_backend_are_identical_to_whole_rows(vellum, synth_gguf):
    # Top-k sampled and greedy rows take their candidates from Backend::top_k_rows / argmax_rows, and
    # rows sampled without top-k their token from Backend::draw_rows (min-p and top-p cut there),
    # penalties and biases applied first by Backend::edit_logits, unless --whole-logits copies every
    # row back; a 32 000-token vocabulary, all of k in play.
    for sampling in (["--temp", "1.5", "--top-k", "40", "--top-p", "1", "-s", "11"], [],
                     ["--temp", "1", "--top-k", "0", "--top-p", "1", "--min-p", "0", "-s", "4"],
                     ["--temp", "1", "--top-k", "0", "--top-p", "0.9", "--min-p", "0.05", "-s", "5"],
                     ["--temp", "0.9", "--top-k", "0", "--repeat-penalty", "1.3", "--presence-penalty", "0.5",
                      "--frequency-penalty", "0.4", "-s", "6"],
                     ["--repeat-penalty", "1.8"]):
        p = proof(vellum, synth_gguf, "", "--whole-logits", "--ignore-eos", *sampling)
        assert p.stdout.strip().splitlines()[-1] == "proof: IDENTICAL: 10 prompts, 240 generated tokens each side", p.stdout


def test_dense_weight_cache_changes_nothing_on_the_cpu(vellum, stories_gguf):
    # --dense-weight-cache is the CUDA backend's (BF16 copies of quantized weights); the CPU backend
    # accepts and ignores it.
    p = proof(vellum, stories_gguf, "", "--dense-weight-cache 64", "--ignore-eos")
    assert p.stdout.strip().splitlines()[-1].startswith("proof: IDENTICAL: 10 prompts, "), p.stdout


def test_a_real_difference_fails_with_the_divergence(vellum, stories_gguf):
    # The hidden hook shifts side b's seeds: sampled text must then differ somewhere.
    p = proof(vellum, stories_gguf, "", "", "--temp", "1.0", "-s", "5", "--test-seed-offset-b", "1", check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].startswith("first divergence: prompt 0 (\"Once upon a time\"), generated position ")
    assert lines[1].startswith("  before (positions ")
    assert lines[2].startswith("  a: ") and lines[3].startswith("  b: ")
    assert lines[2] != lines[3].replace("  b: ", "  a: ")
    assert lines[-1].startswith("proof: DIFFERENT: ")


def test_different_models_differ(vellum, stories_gguf, tmp_path, fixtures):
    # Same architecture and vocabulary, other weights: stories260K against a random model on its vocab.
    other = tmp_path / "random-stories.gguf"
    run(vellum, "gguf", "synth", "--preset", "tiny", "--layers", "1", "--vocab", stories_gguf, "-t", "F32", "-o", other)
    p = proof(vellum, stories_gguf, "", f"-m {other}", check=False)
    assert p.returncode == 1
    assert "first divergence: prompt 0" in p.stdout
    assert p.stdout.strip().splitlines()[-1].startswith("proof: DIFFERENT: 10 of 10 prompts differ")


def test_bad_arguments(vellum, stories_gguf, tmp_path):
    p = proof(vellum, stories_gguf, "--block-size 0", "", check=False)
    assert p.returncode == 1 and "--block-size 0 must be in [1, 1024]" in p.stderr
    p = proof(vellum, stories_gguf, "--no-such-flag", "", check=False)
    assert p.returncode == 1 and "--no-such-flag" in p.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": 1}\n')
    p = run(vellum, "proof", "-m", stories_gguf, "--prompts", bad, check=False)
    assert p.returncode == 1 and "bad.jsonl:1: expected a string \"prompt\" field" in p.stderr
    p = run(vellum, "proof", "-m", stories_gguf, "--prompts", tmp_path / "missing.txt", check=False)
    assert p.returncode == 1 and "cannot open prompt file" in p.stderr
