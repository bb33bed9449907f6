#!/usr/bin/env python3
"""The programmatic-launch contract (src/backend/cuda/pdl.cuh) on the compiled code (round 24).

For every function in `cuobjdump -sass` output, the dependency wait (griddepcontrol.wait is ACQBULK in
SASS) must exist and come before any store, atomic, barrier or exit: ptxas may move instructions
across it, so the source check (tests/py/test_cuda_pdl_contract.py) is not enough alone. Loads
before the wait are allowed (weights and step inputs, pdl.cuh) and listed.

Usage: cuobjdump -sass build/libvellum_cuda.a | python3 tools/cuda/pdl_sass_audit.py
(cuobjdump: the CUDA toolkit's, or PyPI nvidia-cuda-cuobjdump). tests/py/test_cuda_sass_contract.py
runs it on the build.
"""
import collections
import re
import sys

FORBIDDEN = re.compile(r"(STG|STS|ST\b|ATOM|RED|BAR|EXIT|RET|MEMBAR)")
LOADS = re.compile(r"(LDG|LDS|LDGSTS|LD\b)")


def audit(sass):
    """Returns (functions, violations, report): report lines name the loads issued before the wait."""
    functions = re.split(r"\n\s+Function : ", sass)[1:]
    violations, report = [], []
    for f in functions:
        name = f.split("\n", 1)[0]
        lines = [re.sub(r"/\*.*?\*/", "", l).strip() for l in f.split("\n") if re.search(r"/\*[0-9a-f]{4}\*/", l)]
        wait = next((i for i, l in enumerate(lines) if "ACQBULK" in l), None)
        if wait is None:
            violations.append(f"no dependency wait: {name}")
            continue
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", l).split()[0] for l in lines[:wait] if l)
        forbidden = {op: n for op, n in ops.items() if FORBIDDEN.match(op)}
        if forbidden:
            violations.append(f"{forbidden} before the wait: {name}")
        loads = {op: n for op, n in ops.items() if LOADS.match(op)}
        if loads:
            report.append(f"{wait:5d} instructions before the wait, loads {loads}: {name[:150]}")
    return len(functions), violations, report


if __name__ == "__main__":
    n, violations, report = audit(sys.stdin.read())
    print("\n".join(report))
    print(f"{n} functions, {len(report)} with loads before the wait, {len(violations)} violations")
    for v in violations:
        print("VIOLATION", v)
    sys.exit(1 if violations or n == 0 else 0)
