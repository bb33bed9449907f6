"""Seeds for fuzz_tokenizer: the llama.cpp tokenizer test strings and the Hugging Face reference
texts from the fixtures, plus hand-made edge cases (invalid UTF-8, special-token text, repetitions).
The first byte of each seed selects the vocabulary and mode (see fuzz_tokenizer.cpp)."""
import json
import pathlib

SEP = "\n__ggml_vocab_test__\n"


def generate(outdir: pathlib.Path, fixtures: pathlib.Path) -> None:
    texts = []
    vocab_dir = fixtures / "tokenizers" / "ggml-vocab"
    inputs = sorted(vocab_dir.glob("*.inp"))
    if not inputs:
        raise FileNotFoundError(f"no .inp files under {vocab_dir}")
    for inp in inputs[:1]:  # every .inp holds the same strings
        raw = inp.read_bytes().decode("utf-8")
        texts += [t.encode("utf-8") for t in raw.split(SEP) if t]
    for ref in sorted((fixtures / "tokenizers" / "reference").glob("*.json")):
        for case in json.loads(ref.read_text(encoding="utf-8"))["cases"]:
            texts.append(case["text"].encode("utf-8"))
    texts += [
        b"\xff\xfe\xc0\x80 invalid \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82",
        b"<s></s><unk><|endoftext|><|im_start|>user\nhi<|im_end|>[CLS][SEP]",
        b"a" * 5000,
        b" " * 3000 + b"\n" * 3000,
        "🦙".encode() * 500,
        b"1234567890" * 300,
        b"\x00\x01\x02 \t\r\n\x7f",
        "Cafe\u0301 Vie\u0323\u0302t \u1100\u1161\u11a8 \u212b".encode(),
    ]
    seen = set()
    n = 0
    for i, t in enumerate(texts):
        for mode in (i % 7, 16 + (i % 7), 48 + (i % 7)):
            data = bytes([mode]) + t
            if data in seen:
                continue
            seen.add(data)
            (outdir / f"seed_{n:04d}").write_bytes(data)
            n += 1
