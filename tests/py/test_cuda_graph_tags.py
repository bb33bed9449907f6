"""The decode-graph fingerprint's op tags (src/backend/cuda/cuda_graphs.h), checked on the source.

A recorded step is replayed from the graph whose fingerprint matches: every op mixes a tag of its
own, then its arguments. Two ops with one tag leave only their argument lists to tell them apart,
so each tag must belong to one call site (round 34 had reused three).
"""
import collections
import pathlib
import re

CUDA_DIR = pathlib.Path(__file__).resolve().parents[2] / "src" / "backend" / "cuda"


def test_every_op_mixes_a_tag_of_its_own():
    sites = collections.defaultdict(list)
    for path in sorted(CUDA_DIR.glob("*.cpp")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in re.finditer(r"graphs\.mix\((\d+)\s*,", line):
                sites[int(m.group(1))].append(f"{path.name}:{n}")
    # The backend records dozens of ops; finding few would mean the pattern, not the code, is wrong.
    assert len(sites) >= 40, f"{len(sites)} tags found"
    repeated = {tag: where for tag, where in sites.items() if len(where) > 1}
    assert not repeated, f"tags mixed at more than one call site: {repeated}"
