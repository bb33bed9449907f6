#!/usr/bin/env python3
"""Writes the reference vectors for tests/unit/test_quant.cpp and tests/unit/test_half.cpp.

The expected values come from the PyPI `gguf` package (gguf-py, llama.cpp's own Python library) and
numpy, never from vellum, so the C++ tests compare against an independent implementation:

  tests/data/quant/<type>.json   one file per tensor type:
    dequantize: cases of raw block bytes (hex) -> gguf.quants.dequantize, as f32 bit patterns (u32 hex).
                Payload bytes are random; f16 scale fields are set to sane values, plus edge cases
                (zero, subnormal, largest finite, negative, all-0x00 / all-0xff payloads, and an inf
                scale, whose NaN results only have to be NaN: their payload is the hardware's choice).
    quantize:   f32 inputs (u32 hex) -> expected bytes (hex). "reference" says where the bytes come from:
                gguf.quants.quantize for F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0; gguf-py has no
                K-quant quantizer, so for Q2_K..Q6_K the bytes come from tools/kquant_ref.py, a Python
                transcription of ggml's quantize_row_*_ref (checked here through gguf.quants.dequantize).
                The tests also use these inputs for round-trip error and idempotence checks.
  tests/data/quant/half.json     f32 <-> f16 (numpy astype) and f32 <-> bf16 (gguf.quants BF16, which is
                                 ggml's rounding) including ties, subnormals, inf, NaN and overflow.

Deterministic (fixed seed). Usage: python3 tools/gen_quant_vectors.py [--out tests/data/quant]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

import gguf
import gguf.quants

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kquant_ref  # noqa: E402
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T

# Where each type's f16 scale fields sit in a block (byte offsets); everything else is payload.
F16_FIELDS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
}
QUANT_TYPES = list(F16_FIELDS)
FLOAT_TYPES = [T.F32, T.F16, T.BF16]
GGUF_PY_QUANTIZES = {T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0}
# Worst relative RMS error of quantize -> gguf.quants.dequantize on Gaussian data accepted from
# kquant_ref (well above what ggml's quantizers reach): a wrong bit layout lands far outside.
KQUANT_MAX_REL_RMSE = {T.Q2_K: 0.45, T.Q3_K: 0.25, T.Q4_K: 0.12, T.Q5_K: 0.06, T.Q6_K: 0.03}


def u32_hex(a: np.ndarray) -> list[str]:
    return [f"{v:08x}" for v in np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).ravel()]


def f16_bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).astype(np.float16).view(np.uint16)


def sane_scales(rng: np.random.Generator, n: int) -> np.ndarray:
    """f16 bit patterns of random-sign values between 1e-4 and 10 (log-uniform)."""
    mag = 10.0 ** rng.uniform(-4, 1, size=n)
    sign = rng.choice([-1.0, 1.0], size=n)
    return f16_bits(mag * sign)


def set_scales(blocks: np.ndarray, qtype, bits: np.ndarray) -> None:
    """bits: (n_blocks, n_fields) u16 written little-endian into the scale fields."""
    for k, off in enumerate(F16_FIELDS[qtype]):
        blocks[:, off] = bits[:, k] & 0xFF
        blocks[:, off + 1] = bits[:, k] >> 8


def dequant_case(name: str, qtype, blocks: np.ndarray, nan_payload_exact: bool = True) -> dict:
    blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
    with np.errstate(invalid="ignore"):  # the inf_scale case makes NaNs (inf * 0) on purpose
        out = gguf.quants.dequantize(blocks.ravel(), qtype)
    return {
        "name": name,
        "blocks": blocks.tobytes().hex(),
        "expected": u32_hex(out),
        "nan_payload_exact": nan_payload_exact,
    }


def dequant_cases(rng: np.random.Generator, qtype) -> list[dict]:
    _, type_size = GGML_QUANT_SIZES[qtype]
    if qtype in FLOAT_TYPES:
        # Raw random bit patterns: every class of value (NaNs, infs, subnormals) turns up.
        raw = rng.integers(0, 256, size=(64 if qtype != T.F32 else 48) * type_size, dtype=np.uint8)
        cases = [dequant_case("random_bits", qtype, raw.reshape(-1, type_size))]
        if qtype == T.F16:
            special = np.array([0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                                0x7C01, 0x7E00, 0xFE00, 0x7FFF, 0x3C00, 0x3555], dtype=np.uint16)
            cases.append(dequant_case("special", qtype, special.view(np.uint8).reshape(-1, 2)))
        if qtype == T.BF16:
            special = np.array([0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7F81,
                                0x7FC0, 0xFFC1, 0x3F80], dtype=np.uint16)
            cases.append(dequant_case("special", qtype, special.view(np.uint8).reshape(-1, 2)))
        return cases

    nf = len(F16_FIELDS[qtype])
    n_random = 4 if type_size > 100 else 12

    def payload(n):
        return rng.integers(0, 256, size=(n, type_size), dtype=np.uint8)

    cases = []
    b = payload(n_random)
    set_scales(b, qtype, sane_scales(rng, n_random * nf).reshape(n_random, nf))
    cases.append(dequant_case("random", qtype, b))

    b = payload(1)
    set_scales(b, qtype, np.zeros((1, nf), dtype=np.uint16))
    cases.append(dequant_case("zero_scales", qtype, b))

    b = payload(2)
    set_scales(b, qtype, np.array([[0x0001] * nf, [0x83FF] * nf], dtype=np.uint16))  # f16 subnormals
    cases.append(dequant_case("subnormal_scales", qtype, b))

    b = payload(2)
    set_scales(b, qtype, np.array([[0x7BFF] * nf, [0xFBFF] * nf], dtype=np.uint16))  # +-65504
    cases.append(dequant_case("largest_scales", qtype, b))

    b = np.zeros((2, type_size), dtype=np.uint8)
    b[1, :] = 0xFF
    set_scales(b, qtype, sane_scales(rng, 2 * nf).reshape(2, nf))
    cases.append(dequant_case("payload_00_ff", qtype, b))

    b = payload(1)
    set_scales(b, qtype, np.array([[0x7C00] + [0x3C00] * (nf - 1)], dtype=np.uint16))  # inf (and 1.0)
    cases.append(dequant_case("inf_scale", qtype, b, nan_payload_exact=False))
    return cases


def quant_inputs(rng: np.random.Generator, block: int) -> list[tuple[str, np.ndarray]]:
    """Named f32 inputs, each a whole number of blocks."""
    f = np.float32
    many = 4 if block <= 32 else 2
    cases = [
        ("normal", (rng.standard_normal(many * block) * 0.05).astype(f)),
        ("wide_range", (rng.standard_normal(block) * 10.0 ** rng.uniform(-3, 3, size=block)).astype(f)),
        ("uniform_positive", rng.uniform(0.5, 2.0, size=block).astype(f)),
        ("uniform_negative", rng.uniform(-3.0, -0.1, size=block).astype(f)),
        ("zeros", np.zeros(block, dtype=f)),
        ("constant", np.full(block, 0.375, dtype=f)),
    ]
    x = (rng.standard_normal(block) * 0.01).astype(f)
    x[block // 3] = 4.0  # one outlier sets the scale
    cases.append(("outlier", x))
    x = (rng.standard_normal(block) * 0.01).astype(f)
    x[block - 1] = -4.0  # negative absmax: the sign matters for the symmetric types
    cases.append(("negative_outlier", x))
    # Integer and half-integer grids hit the rounding ties of the round/trunc steps.
    cases.append(("ties", ((rng.integers(-254, 255, size=block) / 2.0)).astype(f)))
    x = rng.integers(-8, 8, size=block).astype(f)
    x[0] = -8.0
    cases.append(("grid", x))
    cases.append(("tiny", (rng.standard_normal(block) * 1e-6).astype(f)))
    if block > 32:
        # K-quants: more sub-blocks, each with its own spread and offset (some all-positive, some
        # heavy-tailed), so more branches of the scale searches decide the bytes.
        n_sub = 4 * block // 32
        spread = 10.0 ** rng.uniform(-2, 0, size=(n_sub, 1))
        offset = rng.choice([0.0, 0.0, 1.0, -1.0], size=(n_sub, 1)) * spread * rng.uniform(0, 3, size=(n_sub, 1))
        x = rng.laplace(size=(n_sub, 32)) * spread + offset
        cases.append(("mixed_subblocks", x.astype(f).ravel()))
    return cases


def quantize_cases(rng, qtype) -> list[dict]:
    block = max(GGML_QUANT_SIZES[qtype][0], 32)  # plain float types: 32 elements a case
    out = []
    for name, x in quant_inputs(rng, block):
        if qtype in GGUF_PY_QUANTIZES:
            q = np.ascontiguousarray(gguf.quants.quantize(x.reshape(-1, block), qtype)).view(np.uint8).tobytes()
            reference = "gguf.quants.quantize"
        else:
            q = kquant_ref.quantize(x, qtype.name)
            reference = "tools/kquant_ref.py (ggml quantize_row_*_ref transcribed)"
            check_kquant_layout(qtype, name, x, q)
        out.append({"name": name, "reference": reference, "input": u32_hex(x), "expected": q.hex()})
    return out


def check_kquant_layout(qtype, name: str, x: np.ndarray, q: bytes) -> None:
    """kquant_ref's bytes must dequantize (by gguf-py, independently) close to the input."""
    y = gguf.quants.dequantize(np.frombuffer(q, dtype=np.uint8), qtype)
    if name == "normal":
        rel = float(np.sqrt(np.mean((x - y) ** 2)) / np.sqrt(np.mean(x.astype(np.float64) ** 2)))
        if rel > KQUANT_MAX_REL_RMSE[qtype]:
            raise SystemExit(f"{qtype.name} {name}: kquant_ref round trip error {rel:.3f} is too large")
    if name == "zeros" and np.any(y != 0):
        raise SystemExit(f"{qtype.name}: zeros do not round-trip")


def half_vectors(rng: np.random.Generator) -> dict:
    f32 = lambda bits: np.array(bits, dtype=np.uint32)  # noqa: E731
    special = [
        0x00000000, 0x80000000, 0x3F800000, 0xBF800000,
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000, 0x7F7FFFFF,  # around 65504 / overflow
        0x7F800000, 0xFF800000,  # inf
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000, 0x7F802000, 0x7FBFFFFF, 0xFFC12345, 0x7FFFFFFF,  # NaN
        0x33800000, 0x33000000, 0x33000001, 0x32FFFFFF, 0x33C00000, 0x34200000, 0x34000000,  # f16 subnormal ties
        0x387FC000, 0x387FE000, 0x387FF000, 0x38800000, 0x38800FFF, 0x38801000, 0x38803000,  # normal boundary
        0x3F801000, 0x3F803000, 0x3F801001, 0x3F800FFF, 0x3F7FF000,  # ties around 1.0
        0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x3F7FFF80,  # bf16 ties around 1.0
        0x00000001, 0x007FFFFF, 0x00800000, 0x80000001,  # f32 subnormals
        0x7F7F8000, 0x7F7F7FFF, 0x7F7FC000,  # bf16 overflow by rounding
    ]
    rand_any = rng.integers(0, 2**32, size=800, dtype=np.uint64).astype(np.uint32)
    # Values inside f16's range, with low mantissa bits that are exactly ties half of the time.
    in_range = rng.uniform(-17, 16, size=600)
    rand_f16 = (np.sign(rng.standard_normal(600)) * 2.0 ** in_range).astype(np.float32).view(np.uint32)
    rand_f16 = np.where(rng.random(600) < 0.5, (rand_f16 & np.uint32(0xFFFFE000)) | np.uint32(0x1000), rand_f16)
    inputs = np.concatenate([f32(special), rand_any, rand_f16.astype(np.uint32)])
    x = inputs.view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        to_f16 = x.astype(np.float16).view(np.uint16)
    to_bf16 = gguf.quants.quantize(x, T.BF16).view(np.uint16)
    halves = np.concatenate([
        np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0200, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7C01,
                  0x7DFF, 0x7E00, 0xFFFF, 0x3C00, 0xC000], dtype=np.uint16),
        np.arange(0, 0x0400, 7, dtype=np.uint16),  # subnormals
        rng.integers(0, 2**16, size=600, dtype=np.uint16),
    ])
    from_f16 = halves.view(np.float16).astype(np.float32)
    from_bf16 = gguf.quants.dequantize(halves.view(np.uint8), T.BF16)
    return {
        "f32_to_f16": {"input": [f"{v:08x}" for v in inputs], "expected": [f"{v:04x}" for v in to_f16]},
        "f32_to_bf16": {"input": [f"{v:08x}" for v in inputs], "expected": [f"{v:04x}" for v in to_bf16]},
        "f16_to_f32": {"input": [f"{v:04x}" for v in halves], "expected": u32_hex(from_f16)},
        "bf16_to_f32": {"input": [f"{v:04x}" for v in halves], "expected": u32_hex(from_bf16)},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "quant"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    provenance = f"tools/gen_quant_vectors.py with gguf {getattr(gguf, '__version__', '?')}, numpy {np.__version__}"
    try:
        from importlib.metadata import version
        provenance = f"tools/gen_quant_vectors.py with gguf {version('gguf')}, numpy {np.__version__}"
    except Exception:  # noqa: BLE001
        pass

    rng = np.random.default_rng(20240611)
    total = 0
    for qtype in FLOAT_TYPES + QUANT_TYPES:
        block, size = GGML_QUANT_SIZES[qtype]
        doc = {
            "generator": provenance,
            "type": qtype.name,
            "type_id": int(qtype),
            "block_elements": block,
            "block_bytes": size,
            "dequantize": dequant_cases(rng, qtype),
        }
        doc["quantize"] = quantize_cases(rng, qtype)
        path = os.path.join(args.out, f"{qtype.name.lower()}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")
        total += os.path.getsize(path)

    doc = {"generator": provenance, **half_vectors(rng)}
    path = os.path.join(args.out, "half.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")
    total += os.path.getsize(path)
    print(f"wrote {len(FLOAT_TYPES + QUANT_TYPES) + 1} files, {total} bytes, to {os.path.normpath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
