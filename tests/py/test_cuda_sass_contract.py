"""The programmatic-launch contract (src/backend/cuda/pdl.cuh) checked on the compiled kernels.

test_cuda_pdl_contract.py checks the source; ptxas may still move a store, barrier or exit above
the dependency wait. This test disassembles the built CUDA library and requires, in every function,
the wait (ACQBULK) before any of those (tools/cuda/pdl_sass_audit.py).
"""
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "cuda"))
from pdl_sass_audit import audit  # noqa: E402


def cuobjdump():
    """The toolkit's cuobjdump if installed, else PyPI nvidia-cuda-cuobjdump's (tests/requirements.txt)."""
    toolkit = shutil.which("cuobjdump") or shutil.which("cuobjdump", path="/usr/local/cuda/bin")
    if toolkit:
        return toolkit
    import nvidia
    found = [p for base in nvidia.__path__ for p in sorted(pathlib.Path(base).glob("cu*/bin/cuobjdump"))]
    assert found, "no cuobjdump: install tests/requirements.txt (nvidia-cuda-cuobjdump)"
    return str(found[0])


def test_every_compiled_kernel_waits_before_storing(vellum):
    lib = vellum.parent / "libvellum_cuda.a"
    if not lib.exists():
        pytest.skip(f"the CUDA backend was not built ({lib} missing: no nvcc)")
    sass = subprocess.run([cuobjdump(), "-sass", str(lib)], capture_output=True, text=True, check=True).stdout
    n, violations, _ = audit(sass)
    # The backend has hundreds of kernel instances; finding few would mean the parser, not the code, is wrong.
    assert n >= 100, f"{n} functions disassembled"
    assert not violations, "\n".join(violations)


def test_the_audit_catches_a_store_before_the_wait():
    ok = "\n        Function : k\n        /*0000*/ LDG.E R2, desc[UR4][R4.64] ;\n        /*0010*/ ACQBULK ;\n        /*0020*/ STG.E desc[UR4][R4.64], R2 ;\n"
    bad = "\n        Function : k\n        /*0000*/ @P0 STG.E desc[UR4][R4.64], R2 ;\n        /*0010*/ ACQBULK ;\n"
    exits = "\n        Function : k\n        /*0000*/ @!P0 EXIT ;\n        /*0010*/ ACQBULK ;\n"
    none = "\n        Function : k\n        /*0000*/ STG.E desc[UR4][R4.64], R2 ;\n"
    assert audit(ok)[:2] == (1, [])
    for text in (bad, exits, none):
        assert len(audit(text)[1]) == 1, text
