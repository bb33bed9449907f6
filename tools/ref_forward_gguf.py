#!/usr/bin/env python3
"""A slow, float64 numpy forward of a llama/qwen2/qwen3 GGUF, to arbitrate greedy near ties.

Weights are dequantized exactly (gguf-py's `gguf.quants`) and every product and sum is done in float64
with activations never quantized, so its logits are what the quantized model computes when rounding
is taken out. Run it with a prompt's token ids followed by a continuation (teacher forcing): for every
continuation position it prints the argmax, the top two logits and their gap, and whether the given
token is the argmax. Where vellum and llama.cpp pick different tokens at a near tie, this says which
pick the exact arithmetic makes.

    python3 tools/ref_forward_gguf.py MODEL.gguf --prompt-ids 785,6722,315,9625,374 --ids 12095,13,576
    python3 tools/ref_forward_gguf.py MODEL.gguf --reference tests/data/llamacpp_reference/X.json --case 1 [--vellum]

Needs numpy and gguf (tests/requirements.txt). A 0.5B model takes a few GB of memory and about a minute.
"""
import argparse
import json
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType
from gguf.quants import dequantize


def field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    if f.types and f.types[0] == GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode()
    return f.parts[f.data[0]][0].item()


class Model:
    def __init__(self, path):
        self.r = GGUFReader(path)
        self.t = {t.name: t for t in self.r.tensors}
        a = field(self.r, "general.architecture")
        if a not in ("llama", "qwen2", "qwen3"):
            sys.exit(f"architecture {a!r} is not supported here (llama, qwen2, qwen3)")
        self.arch = a
        self.layers = field(self.r, f"{a}.block_count")
        self.dim = field(self.r, f"{a}.embedding_length")
        self.heads = field(self.r, f"{a}.attention.head_count")
        self.kv_heads = field(self.r, f"{a}.attention.head_count_kv", self.heads)
        self.head_dim = field(self.r, f"{a}.attention.key_length", self.dim // self.heads)
        self.eps = field(self.r, f"{a}.attention.layer_norm_rms_epsilon")
        self.theta = field(self.r, f"{a}.rope.freq_base", 10000.0)
        self.rope_dim = field(self.r, f"{a}.rope.dimension_count", self.head_dim)
        self.neox = a != "llama"  # llama.cpp: LLAMA_ROPE_TYPE_NORM for llama, NEOX for qwen2/qwen3

    def w(self, name):
        t = self.t[name]
        x = dequantize(t.data, t.tensor_type)
        shape = [int(d) for d in reversed(t.shape)]  # ggml ne0 is the fastest dimension
        return np.asarray(x, dtype=np.float64).reshape(shape)

    def has(self, name):
        return name in self.t

    def rms(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * w

    def rope(self, x, pos):
        # x: [n, heads, head_dim]
        d = self.rope_dim
        inv = self.theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
        ang = pos[:, None].astype(np.float64) * inv[None, :]  # [n, d/2]
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        out = x.copy()
        if self.neox:
            a, b = x[..., : d // 2], x[..., d // 2 : d]
            out[..., : d // 2] = a * c - b * s
            out[..., d // 2 : d] = a * s + b * c
        else:
            a, b = x[..., 0:d:2], x[..., 1:d:2]
            out[..., 0:d:2] = a * c - b * s
            out[..., 1:d:2] = a * s + b * c
        return out

    def forward(self, ids):
        """Logits for every position of `ids` (one causal pass, no cache)."""
        n = len(ids)
        pos = np.arange(n)
        emb = self.w("token_embd.weight")
        x = emb[np.asarray(ids)]
        del emb
        hd, H, KV = self.head_dim, self.heads, self.kv_heads
        mask = np.triu(np.full((n, n), -np.inf), 1)
        for l in range(self.layers):
            p = f"blk.{l}."
            h = self.rms(x, self.w(p + "attn_norm.weight"))
            q, k, v = (h @ self.w(p + f"attn_{m}.weight").T for m in "qkv")
            for m, arr in (("q", q), ("k", k), ("v", v)):
                if self.has(p + f"attn_{m}.bias"):
                    arr += self.w(p + f"attn_{m}.bias")
            q, k, v = q.reshape(n, H, hd), k.reshape(n, KV, hd), v.reshape(n, KV, hd)
            if self.has(p + "attn_q_norm.weight"):
                q = self.rms(q, self.w(p + "attn_q_norm.weight"))
                k = self.rms(k, self.w(p + "attn_k_norm.weight"))
            q, k = self.rope(q, pos), self.rope(k, pos)
            g = H // KV
            att = np.empty((n, H, hd))
            for head in range(H):
                s = q[:, head, :] @ k[:, head // g, :].T / np.sqrt(hd) + mask
                s = np.exp(s - s.max(axis=-1, keepdims=True))
                s /= s.sum(axis=-1, keepdims=True)
                att[:, head, :] = s @ v[:, head // g, :]
            x = x + att.reshape(n, H * hd) @ self.w(p + "attn_output.weight").T
            h = self.rms(x, self.w(p + "ffn_norm.weight"))
            gate = h @ self.w(p + "ffn_gate.weight").T
            up = h @ self.w(p + "ffn_up.weight").T
            x = x + (gate / (1 + np.exp(-gate)) * up) @ self.w(p + "ffn_down.weight").T
            print(f"  layer {l + 1}/{self.layers}", end="\r", file=sys.stderr, flush=True)
        h = self.rms(x, self.w("output_norm.weight"))
        out = self.w("output.weight" if self.has("output.weight") else "token_embd.weight")
        return h @ out.T


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--prompt-ids", help="comma-separated prompt token ids")
    ap.add_argument("--ids", help="comma-separated continuation token ids to check")
    ap.add_argument("--reference", help="a tests/data/llamacpp_reference JSON: take prompt and continuation from it")
    ap.add_argument("--case", type=int, default=0)
    ap.add_argument("--vellum", action="store_true", help="with --reference: check vellum's continuation, not llama.cpp's")
    ap.add_argument("--steps", type=int, default=0, help="check only the first STEPS continuation tokens (0: all)")
    a = ap.parse_args()
    if a.reference:
        ref = json.load(open(a.reference))
        c = ref["llama_cpp"]["cases"][a.case]
        prompt = c["prompt_ids"]
        cont = ref["vellum"]["cases"][a.case]["generated_ids"] if a.vellum else c["generated_ids"]
    else:
        prompt = [int(x) for x in a.prompt_ids.split(",")]
        cont = [int(x) for x in a.ids.split(",")] if a.ids else []
    if a.steps:
        cont = cont[: a.steps]
    m = Model(a.model)
    logits = m.forward(prompt + cont[:-1] if cont else prompt)
    print(file=sys.stderr)
    for i in range(max(len(cont), 1)):
        row = logits[len(prompt) - 1 + i]
        top = np.argsort(-row)[:2]
        given = cont[i] if cont else None
        flag = "" if given is None else ("ok" if given == top[0] else f"given {given} ({row[given]:.4f}) is NOT the argmax")
        print(f"step {i}: argmax {top[0]} ({row[top[0]]:.4f}), second {top[1]} ({row[top[1]]:.4f}), "
              f"gap {row[top[0]] - row[top[1]]:.4f} {flag}")


if __name__ == "__main__":
    main()
