"""Norms that must give the norm kernel's bits spell their sum of squares with explicit roundings.

nvcc contracts `v.x * v.x + v.y * v.y + ...` into FMAs as it chooses per instantiation. Round 30 found
add_rms_norm_kernel with fma(y, y, x·x) at one float4 a thread and fma(x, x, y·y) at two or more, and
round 19's layer kernel with fma(x, x, y·y): a norm's last bits then differed between kernels meant
to match, and the layer kernel's logits parted from the ops' in a model although every op-level check
agreed (docs/cuda.md, round 30). CI cannot run CUDA code, so the rule is checked on the source: no
CUDA source writes a float4's sum of squares as an expression, and the kernels whose norms must match
call sum_squares() (src/backend/cuda/sum_squares.cuh).
"""
import pathlib
import re

CUDA_DIR = pathlib.Path(__file__).resolve().parents[2] / "src" / "backend" / "cuda"
# A float4's components squared and added in one expression: `a.x * a.x + a.y * a.y`.
SQUARES = re.compile(r"([\w\[\]]+)\.x\s*\*\s*\1\.x\s*\+\s*\1\.y\s*\*\s*\1\.y")


def sources():
    return sorted(CUDA_DIR.glob("*.cu")) + sorted(CUDA_DIR.glob("*.cuh"))


def test_the_pattern_finds_the_old_expression():
    # The expression both kernels had before round 30 (so the search below can fail).
    assert SQUARES.search("ss += v[j].x * v[j].x + v[j].y * v[j].y + v[j].z * v[j].z + v[j].w * v[j].w;")


def test_no_cuda_source_sums_squares_as_an_expression():
    found = []
    for path in sources():
        code = re.sub(r"//[^\n]*", "", path.read_text())
        found += [f"{path.name}: {m.group(0)}" for m in SQUARES.finditer(code)]
    assert len(sources()) >= 20
    assert not found, "use sum_squares() (sum_squares.cuh): " + "; ".join(found)


def test_the_norms_that_must_match_share_sum_squares():
    for name in ("fused_kernels.cu", "layer_kernel.cu"):
        code = re.sub(r"//[^\n]*", "", (CUDA_DIR / name).read_text())
        assert "sum_squares(" in code, f"{name}: its norm must sum squares with sum_squares()"
