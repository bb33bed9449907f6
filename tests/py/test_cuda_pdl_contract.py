"""The programmatic-launch contract of the CUDA backend (src/backend/cuda/pdl.cuh), checked on the source.

Decode graphs start each kernel of this backend before the previous one has finished; that is only
safe if every kernel calls pdl_wait() before it touches activations, and if no thread can leave a
kernel without having waited (completion must stay transitive along the chain). CI cannot run CUDA
code, so the contract is checked where it can be: every __global__ function's body calls
pdl_wait(), and nothing before that call returns or writes through a pointer.
"""
import pathlib
import re

CUDA_DIR = pathlib.Path(__file__).resolve().parents[2] / "src" / "backend" / "cuda"


def kernel_bodies(text):
    """Yields (name, body) for every __global__ function defined in `text`."""
    text = re.sub(r"//[^\n]*", "", text)  # comments mention kernels too
    for m in re.finditer(r"__global__", text):
        open_brace = text.index("{", m.end())
        head = text[m.end():open_brace]
        if head.rstrip().endswith(";"):  # a declaration
            continue
        name = re.search(r"(\w+)\s*\(", re.sub(r"__launch_bounds__\([^)]*\)", "", head)).group(1)
        depth, i = 0, open_brace
        while True:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        yield name, text[open_brace + 1:i]


def test_every_kernel_waits_before_touching_activations():
    sources = sorted(CUDA_DIR.glob("*.cu")) + sorted(CUDA_DIR.glob("*.cuh"))
    kernels = []
    for path in sources:
        for name, body in kernel_bodies(path.read_text()):
            kernels.append(name)
            assert "pdl_wait();" in body, f"{path.name}: kernel {name} never calls pdl_wait()"
            prologue = body[:body.index("pdl_wait();")]
            assert not re.search(r"\breturn\b", prologue), f"{path.name}: kernel {name} can return before pdl_wait()"
            # Before the wait only locals may be assigned (and weights loaded): no store through a
            # pointer or into anything but a local array declared there, no atomics, no barrier.
            local_arrays = set(re.findall(r"(?:\w|\*|>)\s+(\w+)\s*\[[^\]]*\](?:\s*\[[^\]]*\])*\s*;", prologue))
            for line in prologue.splitlines():
                code = line.split("//")[0]
                for m in re.finditer(r"(\w*)\s*(\[[^\]]*\])+\s*[-+*/|&^]?=[^=]", code):
                    assert m.group(1) in local_arrays, f"{path.name}: {name} stores before pdl_wait(): {line.strip()}"
                assert not re.search(r"(\*\w+|->\w+)\s*[-+*/|&^]?=[^=]", code), f"{path.name}: {name} stores before pdl_wait(): {line.strip()}"
                assert not re.search(r"\batomic\w*\(|__syncthreads", code), f"{path.name}: {name} syncs or stores before pdl_wait(): {line.strip()}"
    # The backend has dozens of kernels; finding none would mean the parser, not the code, is wrong.
    assert len(kernels) >= 20, kernels


def test_every_launch_goes_through_launch_kernel():
    # Round 40: eager steps launch kernels programmatically through launch_kernel (launch.h); a
    # triple-chevron launch would silently keep full stream ordering (and a captured graph's edges
    # would still be made programmatic at capture's end, so only eager steps would differ).
    offenders = []
    for path in sorted(CUDA_DIR.glob("*.cu")) + sorted(CUDA_DIR.glob("*.cuh")):
        text = re.sub(r"//[^\n]*", "", path.read_text())
        offenders += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"\w+(?:<[^<>;]*>)?\s*<<<", text)]
    assert not offenders, "\n".join(offenders)
    launches = sum(len(re.findall(r"\blaunch_kernel\(", p.read_text())) for p in CUDA_DIR.glob("*.cu"))
    assert launches >= 50, f"{launches} launch_kernel calls: the parser, not the code, is wrong"
