"""Seeds for fuzz_gguf: real GGUF files and broken copies of them (truncated at many points,
bit-flipped in the header, metadata and tensor-info regions, and with counts and lengths
overwritten by huge values), plus a llama2.c checkpoint converted on the fly when the binary
that converts it is named by VELLUM_BINARY."""
import os
import pathlib
import random
import struct
import subprocess
import tempfile


def _sources(fixtures: pathlib.Path):
    vocab = fixtures / "tokenizers" / "ggml-vocab"
    # The smaller vocabularies keep the fuzzer fast; larger ones add nothing the small ones lack.
    files = sorted(vocab.glob("*.gguf"), key=lambda p: p.stat().st_size)[:4]
    out = [p.read_bytes() for p in files]
    binary = os.environ.get("VELLUM_BINARY")
    stories = fixtures / "stories260K"
    if binary and (stories / "stories260K.bin").exists():
        with tempfile.TemporaryDirectory() as tmp:
            dst = pathlib.Path(tmp) / "stories260K.gguf"
            subprocess.run([binary, "gguf", "convert-llama2c", str(stories / "stories260K.bin"),
                            str(stories / "tok512.bin"), str(dst)], check=True, stdout=subprocess.DEVNULL)
            out.append(dst.read_bytes())
    if not out:
        raise SystemExit(f"fuzz_gguf seeds: no .gguf files under {vocab}")
    return out


def generate(outdir: pathlib.Path, fixtures: pathlib.Path) -> None:
    rng = random.Random(1234)
    n = 0

    def emit(data: bytes) -> None:
        nonlocal n
        (outdir / f"seed_{n:04d}").write_bytes(data)
        n += 1

    for data in _sources(fixtures):
        # Keep seeds small: the header and metadata are where the parser's decisions are.
        head = data[: min(len(data), 256 * 1024)]
        emit(head)
        for cut in sorted({0, 3, 4, 7, 8, 15, 16, 23, 24, 40, 100, 1000, len(head) // 3, len(head) // 2}):
            if cut < len(head):
                emit(head[:cut])
        for _ in range(24):
            b = bytearray(head[: 64 * 1024])
            for _ in range(rng.randint(1, 6)):
                pos = rng.randrange(min(len(b), 4096)) if rng.random() < 0.7 else rng.randrange(len(b))
                b[pos] ^= 1 << rng.randrange(8)
            emit(bytes(b))
        for pos in (8, 16, 24 + 0, 24 + 8):  # counts, then the first key's length and value type
            b = bytearray(head[:4096])
            if pos + 8 <= len(b):
                b[pos:pos + 8] = struct.pack("<Q", rng.choice([0, 1, 2**31, 2**63 - 1, 2**64 - 1]))
                emit(bytes(b))
