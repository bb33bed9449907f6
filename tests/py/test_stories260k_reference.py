"""The converted stories260K GGUF, read by the `gguf` package and run by a plain numpy forward with
GGUF's llama conventions (ggml shapes, interleaved-pair RoPE, tied classifier), reproduces llama2.c's
run.c greedy outputs (greedy-reference.json). This checks that the converter wrote the tensors with
the names, orientation and Q/K row order a GGUF llama runtime expects: a wrong permutation or a
transposed matrix changes the tokens."""
import json

import numpy as np
from gguf import GGUFReader


def load(path):
    r = GGUFReader(path)
    f = r.fields

    def scalar(key):
        return f[key].parts[f[key].data[0]][0].item()

    tokens = [bytes(f["tokenizer.ggml.tokens"].parts[i]).decode() for i in f["tokenizer.ggml.tokens"].data]
    scores = [f["tokenizer.ggml.scores"].parts[i][0].item() for i in f["tokenizer.ggml.scores"].data]
    # ggml shape [in, out] is a row-major [out][in] matrix
    w = {t.name: np.asarray(t.data, dtype=np.float64).reshape([int(d) for d in reversed(t.shape)]) for t in r.tensors}
    hp = dict(dim=scalar("llama.embedding_length"), layers=scalar("llama.block_count"),
              heads=scalar("llama.attention.head_count"), kv_heads=scalar("llama.attention.head_count_kv"),
              eps=scalar("llama.attention.layer_norm_rms_epsilon"), base=scalar("llama.rope.freq_base"))
    return hp, w, tokens, scores


def encode(text, tokens, scores):
    """SentencePiece-style BPE as llama2.c's run.c does it: dummy prefix, chars, best-score merges."""
    index = {t: i for i, t in enumerate(tokens)}
    if not text:  # run.c adds the dummy prefix only to non-empty text
        return []
    text = "\u2581" + text.replace(" ", "\u2581")
    ids = []
    for ch in text:
        if ch in index:
            ids.append(index[ch])
        else:
            ids.extend(index[f"<0x{b:02X}>"] for b in ch.encode())
    while True:
        best, best_i = None, -1
        for i in range(len(ids) - 1):
            merged = tokens[ids[i]] + tokens[ids[i + 1]]
            if merged in index and (best is None or scores[index[merged]] > best):
                best, best_i = scores[index[merged]], i
        if best_i < 0:
            return ids
        ids[best_i:best_i + 2] = [index[tokens[ids[best_i]] + tokens[ids[best_i + 1]]]]


def rmsnorm(x, g, eps):
    return x / np.sqrt(np.mean(x * x) + eps) * g


def rope(v, pos, head, base):
    v = v.reshape(-1, head // 2, 2)
    freq = base ** (-np.arange(0, head, 2) / head)
    c, s = np.cos(pos * freq), np.sin(pos * freq)
    out = np.empty_like(v)
    out[..., 0] = v[..., 0] * c - v[..., 1] * s
    out[..., 1] = v[..., 0] * s + v[..., 1] * c
    return out.reshape(-1)


def generate(hp, w, prompt_ids, total):
    dim, L, H, KVH = hp["dim"], hp["layers"], hp["heads"], hp["kv_heads"]
    head = dim // H
    keys = [[] for _ in range(L)]
    vals = [[] for _ in range(L)]
    seq = list(prompt_ids)
    pos = 0
    while len(seq) < total:
        x = w["token_embd.weight"][seq[pos]].copy()
        for l in range(L):
            p = f"blk.{l}."
            h = rmsnorm(x, w[p + "attn_norm.weight"], hp["eps"])
            q = rope(w[p + "attn_q.weight"] @ h, pos, head, hp["base"])
            keys[l].append(rope(w[p + "attn_k.weight"] @ h, pos, head, hp["base"]))
            vals[l].append(w[p + "attn_v.weight"] @ h)
            K = np.stack(keys[l]).reshape(pos + 1, KVH, head)
            V = np.stack(vals[l]).reshape(pos + 1, KVH, head)
            qg = q.reshape(KVH, H // KVH, head)  # query heads grouped by the KV head they share
            a = np.einsum("gqd,tgd->gqt", qg, K) / np.sqrt(head)
            a = np.exp(a - a.max(axis=-1, keepdims=True))
            a /= a.sum(axis=-1, keepdims=True)
            out = np.einsum("gqt,tgd->gqd", a, V).reshape(dim)
            x = x + w[p + "attn_output.weight"] @ out
            h = rmsnorm(x, w[p + "ffn_norm.weight"], hp["eps"])
            g = w[p + "ffn_gate.weight"] @ h
            x = x + w[p + "ffn_down.weight"] @ (g / (1 + np.exp(-g)) * (w[p + "ffn_up.weight"] @ h))
        pos += 1
        if pos >= len(seq):
            logits = w["token_embd.weight"] @ rmsnorm(x, w["output_norm.weight"], hp["eps"])
            seq.append(int(np.argmax(logits)))
    return seq


def decode(ids, tokens):
    out = b""
    for prev, t in zip(ids, ids[1:]):
        piece = tokens[t]
        if piece.startswith("<0x") and len(piece) == 6:
            out += bytes([int(piece[3:5], 16)])
            continue
        piece = piece.replace("\u2581", " ")
        if prev == 1 and piece.startswith(" "):  # run.c drops the space after BOS
            piece = piece[1:]
        out += piece.encode()
    return out.decode("utf-8", errors="replace")


def test_numpy_forward_on_converted_gguf_matches_run_c(stories_gguf, fixtures):
    ref = json.loads((fixtures / "stories260K" / "greedy-reference.json").read_text())
    hp, w, tokens, scores = load(stories_gguf)
    assert ref["cases"], "no reference cases"
    for case in ref["cases"]:
        ids = [1] + encode(case["prompt"], tokens, scores)
        # run.c forwards positions 0..159 and prints the token sampled at each: 161 tokens with BOS
        out = generate(hp, w, ids, 161)
        assert decode(out, tokens) == case["expected_text"], case["prompt"]
