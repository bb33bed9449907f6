#!/usr/bin/env python3
"""Writes Hugging Face `transformers` reference logits for tests/unit/test_hf_reference.cpp.

For each model below the tool
  1. builds a small *random-initialised* LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM from a
     config (nothing is downloaded), float32, every parameter drawn from a fixed-seed generator
     (weights ~ N(0, 1/fan_in) so activations stay O(1); norm gains ~ 1 + N(0, 0.2^2); biases ~ N(0, 0.5^2)),
  2. exports it to GGUF with the PyPI `gguf` package's GGUFWriter (F32 tensors, the converter is below:
     ggml-order shapes, llama Q/K rows permuted to the interleaved-pair RoPE order as llama.cpp's
     convert_hf_to_gguf.py does, qwen2/qwen3 left in HF's order, no output.weight when tied),
  3. runs random token-id prompts through the HF model (float32, eager attention) and records the logits
     of every position.

Output, in tests/data/hf_reference/:
  <name>.gguf          the model
  <name>.logits.bin    float32 little-endian logits, prompt after prompt, row-major [positions][vocab]
  <name>.json          index: the config, the prompts (token ids, offset of their first logit row in
                       the .bin file, in floats), vocab, library versions, seeds

Deterministic for given torch/transformers versions (the versions are recorded in the JSON). CI does not
run this tool; it only reads the committed files.

Usage: pip install torch transformers numpy gguf
       python3 tools/gen_hf_reference.py [--out tests/data/hf_reference]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import torch
import transformers
import gguf
from transformers import (LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config,
                          Qwen3ForCausalLM)

PROMPT_LENGTHS = [1, 7, 33]

# Tiny models: GQA everywhere (kv_heads < heads); llama untied with rope_theta 500000; qwen2 tied with
# QKV bias; qwen3 untied with head_dim 24 != hidden / heads = 16 (so heads * head_dim = 96 != hidden)
# and rope_theta 1e6.
MODELS = [
    {
        "name": "llama",
        "arch": "llama",
        "seed": 1001,
        "config": dict(vocab_size=256, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                       rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False),
    },
    {
        "name": "qwen2",
        "arch": "qwen2",
        "seed": 1002,
        "config": dict(vocab_size=256, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=256,
                       rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=True),
    },
    {
        "name": "qwen3",
        "arch": "qwen3",
        "seed": 1003,
        "config": dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=24, max_position_embeddings=256,
                       rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False),
    },
]

CLASSES = {
    "llama": (LlamaConfig, LlamaForCausalLM),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
    "qwen3": (Qwen3Config, Qwen3ForCausalLM),
}


def make_config(arch: str, cfg: dict):
    config_cls, _ = CLASSES[arch]
    kwargs = dict(cfg)
    theta = kwargs.pop("rope_theta")
    config = config_cls(**kwargs, rope_theta=theta)
    # transformers >= 5 keeps RoPE settings in rope_parameters; older versions in rope_theta.
    if getattr(config, "rope_parameters", None) is not None:
        config.rope_parameters = {"rope_type": "default", "rope_theta": theta}
    else:
        config.rope_theta = theta
    if arch == "qwen2":
        config.use_sliding_window = False
    config._attn_implementation = "eager"
    return config


def rope_theta_of(config) -> float:
    rp = getattr(config, "rope_parameters", None)
    if rp is not None and "rope_theta" in rp:
        return float(rp["rope_theta"])
    return float(config.rope_theta)


def randomize(model: torch.nn.Module, seed: int) -> None:
    """Replaces every parameter with seeded random values (the HF default init has unit norm gains and
    zero biases, which would leave those code paths untested)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            if p.dim() == 1 and name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
            elif p.dim() == 1:  # RMSNorm gains
                p.copy_(1.0 + torch.randn(p.shape, generator=gen) * 0.2)
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:  # Linear [out, in]
                p.copy_(torch.randn(p.shape, generator=gen) / np.sqrt(p.shape[1]))


def permute_interleaved(w: np.ndarray, n_head: int) -> np.ndarray:
    """HF's Q/K rows (per head: first half then second half of the rotary pairs, NeoX order) to the
    interleaved-pair order the llama GGUF architecture expects (Meta's original layout)."""
    out_dim = w.shape[0]
    head_dim = out_dim // n_head
    return (w.reshape(n_head, 2, head_dim // 2, *w.shape[1:])
            .swapaxes(1, 2)
            .reshape(w.shape))


def export_gguf(model, config, arch: str, name: str, path: str) -> None:
    sd = {k: v.detach().to(torch.float32).cpu().numpy() for k, v in model.state_dict().items()}
    heads = config.num_attention_heads
    kv_heads = config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    tied = bool(config.tie_word_embeddings)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f"hf-reference-{name}")
    w.add_context_length(config.max_position_embeddings)
    w.add_embedding_length(config.hidden_size)
    w.add_block_count(config.num_hidden_layers)
    w.add_feed_forward_length(config.intermediate_size)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(float(config.rms_norm_eps))
    w.add_rope_freq_base(rope_theta_of(config))
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(config.vocab_size)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    def put(gguf_name: str, a: np.ndarray) -> None:
        # numpy [out, in] -> GGUF shape [in, out], same bytes
        w.add_tensor(gguf_name, np.ascontiguousarray(a, dtype=np.float32))

    put("token_embd.weight", sd["model.embed_tokens.weight"])
    put("output_norm.weight", sd["model.norm.weight"])
    if not tied:
        put("output.weight", sd["lm_head.weight"])
    for i in range(config.num_hidden_layers):
        hf = f"model.layers.{i}."
        blk = f"blk.{i}."
        wq = sd[hf + "self_attn.q_proj.weight"]
        wk = sd[hf + "self_attn.k_proj.weight"]
        if arch == "llama":
            wq = permute_interleaved(wq, heads)
            wk = permute_interleaved(wk, kv_heads)
        put(blk + "attn_norm.weight", sd[hf + "input_layernorm.weight"])
        put(blk + "attn_q.weight", wq)
        put(blk + "attn_k.weight", wk)
        put(blk + "attn_v.weight", sd[hf + "self_attn.v_proj.weight"])
        put(blk + "attn_output.weight", sd[hf + "self_attn.o_proj.weight"])
        if arch == "qwen2":
            put(blk + "attn_q.bias", sd[hf + "self_attn.q_proj.bias"])
            put(blk + "attn_k.bias", sd[hf + "self_attn.k_proj.bias"])
            put(blk + "attn_v.bias", sd[hf + "self_attn.v_proj.bias"])
        if arch == "qwen3":
            put(blk + "attn_q_norm.weight", sd[hf + "self_attn.q_norm.weight"])
            put(blk + "attn_k_norm.weight", sd[hf + "self_attn.k_norm.weight"])
        put(blk + "ffn_norm.weight", sd[hf + "post_attention_layernorm.weight"])
        put(blk + "ffn_gate.weight", sd[hf + "mlp.gate_proj.weight"])
        put(blk + "ffn_up.weight", sd[hf + "mlp.up_proj.weight"])
        put(blk + "ffn_down.weight", sd[hf + "mlp.down_proj.weight"])
    # Every HF parameter must have gone somewhere (a forgotten bias or norm would otherwise go unnoticed).
    expected = {"model.embed_tokens.weight", "model.norm.weight"} | ({"lm_head.weight"} if not tied else set())
    for i in range(config.num_hidden_layers):
        hf = f"model.layers.{i}."
        expected |= {hf + s for s in ["input_layernorm.weight", "post_attention_layernorm.weight",
                                      "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                      "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                                      "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"]}
        if arch == "qwen2":
            expected |= {hf + f"self_attn.{p}_proj.bias" for p in "qkv"}
        if arch == "qwen3":
            expected |= {hf + "self_attn.q_norm.weight", hf + "self_attn.k_norm.weight"}
    left = {k for k in sd if k not in expected and not (tied and k == "lm_head.weight")
            and "rotary_emb" not in k}
    if left:
        sys.exit(f"{name}: parameters not exported: {sorted(left)}")

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def check_gguf(path: str, model, arch: str, config) -> None:
    """Reads the file back with gguf.GGUFReader: the embedding and one Q matrix round-trip."""
    r = gguf.GGUFReader(path)
    t = {x.name: x for x in r.tensors}
    emb = np.asarray(t["token_embd.weight"].data).reshape(config.vocab_size, config.hidden_size)
    assert np.array_equal(emb, model.model.embed_tokens.weight.detach().numpy())
    q = np.asarray(t["blk.0.attn_q.weight"].data)
    hf_q = model.model.layers[0].self_attn.q_proj.weight.detach().numpy()
    if arch == "llama":
        hf_q = permute_interleaved(hf_q, config.num_attention_heads)
    assert np.array_equal(q.reshape(hf_q.shape), hf_q)
    assert [int(d) for d in t["blk.0.attn_q.weight"].shape] == [hf_q.shape[1], hf_q.shape[0]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                                  "data", "hf_reference"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    for spec in MODELS:
        name, arch, seed = spec["name"], spec["arch"], spec["seed"]
        config = make_config(arch, spec["config"])
        _, model_cls = CLASSES[arch]
        torch.manual_seed(seed)
        model = model_cls(config).to(torch.float32).eval()
        randomize(model, seed)
        if config.tie_word_embeddings:
            assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()

        gguf_path = os.path.join(args.out, f"{name}.gguf")
        export_gguf(model, config, arch, name, gguf_path)
        check_gguf(gguf_path, model, arch, config)

        rng = np.random.default_rng(seed)
        prompts = []
        chunks = []
        offset = 0
        for n in PROMPT_LENGTHS:
            # The test also checks that vellum's argmax agrees: every row's top two logits must be far
            # enough apart (1e-3 of max |logit|, 10x the test's bound) that an error within the bound
            # cannot swap them. A prompt with a near-tie is replaced by the next draw.
            for _attempt in range(100):
                ids = rng.integers(0, config.vocab_size, size=n).tolist()
                with torch.no_grad():
                    logits = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False).logits[0]
                logits = logits.to(torch.float32).numpy()
                assert logits.shape == (n, config.vocab_size)
                top2 = np.sort(logits, axis=1)[:, -2:]
                gap = (top2[:, 1] - top2[:, 0]) / np.abs(logits).max(axis=1)
                if gap.min() >= 1e-3:
                    break
            else:
                sys.exit(f"{name}: no prompt of {n} tokens without a near-tie for the argmax")
            prompts.append({"tokens": ids, "logits_offset": offset})
            chunks.append(logits)
            offset += logits.size
        bin_name = f"{name}.logits.bin"
        np.concatenate([c.ravel() for c in chunks]).astype("<f4").tofile(os.path.join(args.out, bin_name))

        index = {
            "generator": "tools/gen_hf_reference.py",
            "model_class": model_cls.__name__,
            "arch": arch,
            "gguf": f"{name}.gguf",
            "logits": bin_name,
            "logits_format": "float32 little-endian, row-major [position][vocab], prompts concatenated",
            "vocab": config.vocab_size,
            "seed": seed,
            "config": spec["config"],
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                         "gguf": getattr(gguf, "__version__", None) or _pkg_version("gguf"),
                         "numpy": np.__version__},
            "prompts": prompts,
        }
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump(index, f, indent=1)
            f.write("\n")
        print(f"{name}: {model_cls.__name__}, {sum(p.numel() for p in model.parameters())} parameters, "
              f"{len(prompts)} prompts, max |logit| {max(float(np.abs(c).max()) for c in chunks):.3f}")


def _pkg_version(pkg: str) -> str | None:
    try:
        from importlib.metadata import version
        return version(pkg)
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    main()
