"""vellum's GGUF files read back by an independent reader (the `gguf` package and its gguf-dump),
and `vellum gguf info` against every fixture."""
import json
import pathlib
import shutil
import struct

import numpy as np
import pytest
from gguf import GGUFReader, GGUFValueType

from conftest import run


def field_value(reader: GGUFReader, key: str):
    f = reader.fields[key]
    t = f.types[0]
    if t == GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    if t == GGUFValueType.ARRAY:
        if f.types[1] == GGUFValueType.STRING:
            return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
        return [f.parts[i][0].item() for i in f.data]
    return f.parts[f.data[0]][0].item()


def read_llama2c(path: pathlib.Path):
    raw = path.read_bytes()
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack("<7i", raw[:28])
    w = np.frombuffer(raw[28:], dtype=np.float32)
    head = dim // heads
    kv_dim = kv_heads * head
    sizes = [("tok", vocab * dim), ("rms_att", layers * dim), ("wq", layers * dim * dim),
             ("wk", layers * dim * kv_dim), ("wv", layers * dim * kv_dim), ("wo", layers * dim * dim),
             ("rms_ffn", layers * dim), ("w1", layers * dim * hidden), ("w2", layers * hidden * dim),
             ("w3", layers * dim * hidden), ("rms_final", dim)]
    out, at = {}, 0
    for name, n in sizes:
        out[name] = w[at:at + n]
        at += n
    cfg = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, vocab=vocab, seq_len=seq_len)
    return cfg, out


def read_llama2c_tokenizer(path: pathlib.Path, n: int):
    raw = path.read_bytes()
    at = 4
    toks, scores = [], []
    for _ in range(n):
        score, length = struct.unpack("<fi", raw[at:at + 8])
        at += 8
        toks.append(raw[at:at + length])
        scores.append(score)
        at += length
    return toks, scores


def test_converted_stories260k_reads_back(stories_gguf, fixtures):
    cfg, w = read_llama2c(fixtures / "stories260K" / "stories260K.bin")
    r = GGUFReader(stories_gguf)
    assert field_value(r, "general.architecture") == "llama"
    assert field_value(r, "llama.embedding_length") == cfg["dim"] == 64
    assert field_value(r, "llama.feed_forward_length") == cfg["hidden"] == 172
    assert field_value(r, "llama.block_count") == cfg["layers"] == 5
    assert field_value(r, "llama.attention.head_count") == 8
    assert field_value(r, "llama.attention.head_count_kv") == 4
    assert field_value(r, "llama.context_length") == 512
    assert field_value(r, "llama.rope.dimension_count") == 8
    assert field_value(r, "tokenizer.ggml.model") == "llama"
    assert field_value(r, "tokenizer.ggml.bos_token_id") == 1
    assert field_value(r, "tokenizer.ggml.eos_token_id") == 2
    assert field_value(r, "tokenizer.ggml.add_bos_token") is True

    tokens = field_value(r, "tokenizer.ggml.tokens")
    types = field_value(r, "tokenizer.ggml.token_type")
    scores = field_value(r, "tokenizer.ggml.scores")
    src_tokens, src_scores = read_llama2c_tokenizer(fixtures / "stories260K" / "tok512.bin", 512)
    assert len(tokens) == 512
    assert tokens[:3] == ["<unk>", "<s>", "</s>"] and types[:3] == [2, 3, 3]
    assert tokens[3] == "<0x00>" and tokens[258] == "<0xFF>" and set(types[3:259]) == {6}
    for i in range(259, 512):
        assert tokens[i] == src_tokens[i].decode("utf-8").replace(" ", "\u2581"), i
        assert types[i] == 1
    assert scores == pytest.approx(src_scores, abs=0)

    by_name = {t.name: t for t in r.tensors}
    # no output.weight: the classifier is shared with the embedding (tied), as in the checkpoint
    assert "output.weight" not in by_name
    assert len(by_name) == 2 + 9 * 5
    emb = by_name["token_embd.weight"]
    assert list(emb.shape) == [64, 512]
    np.testing.assert_array_equal(np.asarray(emb.data).reshape(-1), w["tok"])
    dim, hidden, kv_dim = 64, 172, 32
    for l in range(5):
        def t(name):
            return by_name[f"blk.{l}.{name}.weight"]
        assert list(t("attn_q").shape) == [dim, dim]
        assert list(t("attn_k").shape) == [dim, kv_dim]
        assert list(t("attn_v").shape) == [dim, kv_dim]
        assert list(t("ffn_gate").shape) == [dim, hidden]
        assert list(t("ffn_down").shape) == [hidden, dim]
        assert list(t("ffn_up").shape) == [dim, hidden]
        np.testing.assert_array_equal(np.asarray(t("attn_q").data).reshape(-1), w["wq"][l * dim * dim:(l + 1) * dim * dim])
        np.testing.assert_array_equal(np.asarray(t("attn_k").data).reshape(-1), w["wk"][l * dim * kv_dim:(l + 1) * dim * kv_dim])
        np.testing.assert_array_equal(np.asarray(t("ffn_down").data).reshape(-1), w["w2"][l * dim * hidden:(l + 1) * dim * hidden])
        np.testing.assert_array_equal(np.asarray(t("attn_norm").data), w["rms_att"][l * dim:(l + 1) * dim])
    np.testing.assert_array_equal(np.asarray(by_name["output_norm.weight"].data), w["rms_final"])


def test_gguf_dump_reads_converted_model(stories_gguf):
    dump = shutil.which("gguf-dump")
    assert dump, "gguf-dump (from the gguf package) is not on PATH"
    out = run(dump, "--json", stories_gguf).stdout
    j = json.loads(out)
    assert j["metadata"]["general.architecture"]["value"] == "llama"
    assert j["tensors"]["blk.4.ffn_down.weight"]["shape"] == [172, 64]


@pytest.mark.parametrize("type_name,ggml_type", [("F16", 1), ("Q8_0", 8), ("Q4_K_M", None), ("Q6_K", 14), ("BF16", 30)])
def test_synthetic_model_reads_back(vellum, fixtures, tmp_path, type_name, ggml_type):
    vocab = fixtures / "tokenizers" / "ggml-vocab" / "ggml-vocab-llama-spm.gguf"
    out = tmp_path / "tiny.gguf"
    run(vellum, "gguf", "synth", "--preset", "tiny", "--layers", "8", "--vocab", vocab, "-t", type_name, "-o", out)
    r = GGUFReader(out)
    src = GGUFReader(vocab)
    assert field_value(r, "general.architecture") == "llama"
    assert field_value(r, "llama.embedding_length") == 256
    assert field_value(r, "llama.block_count") == 8
    assert field_value(r, "llama.attention.head_count_kv") == 2
    assert field_value(r, "tokenizer.ggml.tokens") == field_value(src, "tokenizer.ggml.tokens")
    assert field_value(r, "tokenizer.ggml.model") == "llama"
    by_name = {t.name: t for t in r.tensors}
    assert list(by_name["token_embd.weight"].shape) == [256, 32000]
    assert list(by_name["output.weight"].shape) == [256, 32000]
    assert list(by_name["blk.7.ffn_down.weight"].shape) == [768, 256]
    assert by_name["blk.0.attn_norm.weight"].tensor_type == 0
    if ggml_type is not None:
        assert by_name["blk.3.attn_q.weight"].tensor_type == ggml_type
    else:  # Q4_K_M: Q4_K in general, Q6_K for the output and for attn_v/ffn_down of some layers
        assert by_name["blk.3.attn_q.weight"].tensor_type == 12
        assert by_name["output.weight"].tensor_type == 14
        assert by_name["blk.0.attn_v.weight"].tensor_type == 14
        assert by_name["blk.1.attn_v.weight"].tensor_type == 12
    # the weights are what a freshly initialised model holds: finite, centred, std ~0.02
    from gguf.quants import dequantize
    t = by_name["blk.3.ffn_up.weight"]
    w = dequantize(np.asarray(t.data), t.tensor_type)
    assert np.isfinite(w).all()
    assert abs(float(w.mean())) < 2e-3
    assert 0.015 < float(w.std()) < 0.025


def test_synth_presets_have_real_shapes(vellum, tmp_path):
    # qwen2.5-0.5b shape, cut to 1 layer and a small vocabulary so the test stays quick
    out = tmp_path / "qwen.gguf"
    run(vellum, "gguf", "synth", "--preset", "qwen2.5-0.5b", "--layers", "1", "--vocab-size", "1000",
        "-t", "Q4_K", "-o", out)
    r = GGUFReader(out)
    assert field_value(r, "general.architecture") == "qwen2"
    assert field_value(r, "qwen2.embedding_length") == 896
    assert field_value(r, "qwen2.attention.head_count") == 14
    assert field_value(r, "qwen2.attention.head_count_kv") == 2
    assert field_value(r, "qwen2.feed_forward_length") == 4864
    by_name = {t.name: t for t in r.tensors}
    assert "output.weight" not in by_name  # tied embeddings
    assert list(by_name["blk.0.attn_k.bias"].shape) == [128]
    # 896-wide rows are not whole Q4_K blocks: llama.cpp falls back to Q5_0 (or Q8_0) there
    assert by_name["blk.0.attn_q.weight"].tensor_type in (6, 8)
    # 4864-wide rows of ffn_down are 19 blocks of 256: Q4_K fits
    assert by_name["blk.0.ffn_down.weight"].tensor_type == 12


def test_bad_inputs_give_clear_errors(vellum, fixtures, tmp_path):
    p = run(vellum, "gguf", "info", tmp_path / "missing.gguf", check=False)
    assert p.returncode == 1 and "cannot open" in p.stderr
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    p = run(vellum, "gguf", "info", bad, check=False)
    assert p.returncode == 1 and "bad.gguf: at byte 8" in p.stderr, p.stderr
    src = fixtures / "stories260K"
    p = run(vellum, "gguf", "convert-llama2c", src / "tok512.bin", src / "tok512.bin", tmp_path / "x.gguf", check=False)
    assert p.returncode == 1 and "tok512.bin" in p.stderr, p.stderr
    assert not (tmp_path / "x.gguf").exists()
    p = run(vellum, "gguf", "synth", "--preset", "nope", "-o", tmp_path / "y.gguf", check=False)
    assert p.returncode == 1 and "unknown preset 'nope'" in p.stderr
    p = run(vellum, "gguf", "convert-llama2c", src / "stories260K.bin", src / "tok512.bin", tmp_path / "q.gguf",
            "--outtype", "Q4_K", check=False)
    assert p.returncode == 1 and "multiples of 256" in p.stderr, p.stderr


def all_fixture_ggufs(fixtures_root):
    return sorted(pathlib.Path(fixtures_root).rglob("*.gguf"))


def test_info_on_every_fixture_and_the_converted_model(vellum, fixtures, stories_gguf):
    files = all_fixture_ggufs(fixtures) + [stories_gguf]
    assert len(files) >= 12
    for path in files:
        table = run(vellum, "gguf", "info", path).stdout
        assert "architecture:" in table and "tensors (" in table and "totals:" in table
        j = json.loads(run(vellum, "gguf", "info", "--json", path).stdout)
        r = GGUFReader(path)
        assert j["version"] == 3
        assert len(j["tensors"]) == len(r.tensors), path
        assert set(j["metadata"]) == {k for k in r.fields if not k.startswith("GGUF.")}, path
        for t in r.tensors:
            assert t.name in table
        assert j["totals"]["parameters"] == sum(int(t.n_elements) for t in r.tensors)
    j = json.loads(run(vellum, "gguf", "info", "--json", stories_gguf).stdout)
    assert j["architecture"] == "llama"
    assert j["totals"]["tensors"] == 47
    assert j["metadata"]["llama.block_count"] == {"type": "u32", "value": 5}
