#!/usr/bin/env python3
"""A decode step's chain trace (`vellum_cuda_check --chain-trace`, round 30) summed up by layer (round 45).

The trace is a markdown table, one launch a row in order of release, with the time until the next
launch's release (what the launch holds the chain for). A batch-1 layer (round 43's row norm) is six
launches: Q/K/V, the one-row attention, the output projection, gate/up + SwiGLU, g's quantization and
the down projection. Layers are found by the attention's grid (`--attention-grid`; 64 = 2 slices x 32
query heads, llama3-8b at up to 256 positions), grouped by their Q/K/V and down grids (Q4_K_M's Q6_K
and Q4_K layers differ), and each group's medians printed as a markdown table. The last layer, whose
down projection is not a producer, comes out as a group of one; traces from before round 43 (eight
launches a layer, with two norm kernels) do not fit.

--timeline (round 48) prints instead, for each of a layer's launches and the next layer's Q/K/V,
the medians of its first block's residency, its release and its last block's release in µs from
the attention's release, and the SMs it ran on: where a launch's blocks arrive against the chain.

--rope-grid N (round 49) reads steps whose attention is two launches (past 1 024 positions, or
VELLUM_CUDA_ROPE_ATTN=0): the RoPE + K/V store kernel of grid N, then the attention kernel, seven
launches a layer found by the RoPE kernel's grid (llama3-8b: 12).

Usage: chain_summary.py trace-TYPE.md [--attention-grid N | --rope-grid N] [--timeline]
"""
import argparse
import collections
import statistics
import sys

NAMES = ["Q/K/V", "attention", "output projection", "gate/up + SwiGLU", "quantize g", "down projection"]
NAMES_UNFUSED = ["Q/K/V", "RoPE + K/V store", "attention", "output projection", "gate/up + SwiGLU", "quantize g",
                 "down projection"]


def read_trace(lines, full=False):
    """(grid, µs until the next release) a launch, in order; full: every column after the index
    (grid, SMs, first resident, released, last block released, until the next release)."""
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].isdigit():
            if full:
                rows.append((int(cells[1]), int(cells[2]), *(float(c) for c in cells[3:])))
            else:
                rows.append((int(cells[1]), float(cells[6])))
    return rows


def timeline(rows, attention_grid, layer_names=NAMES):
    """Medians over layers, µs from the release of the launch after Q/K/V (the attention, or the
    RoPE kernel with --rope-grid; rows from read_trace(full=True))."""
    names = layer_names + ["next Q/K/V"]
    at = [i for i, r in enumerate(rows) if r[0] == attention_grid and i >= 1 and i + len(layer_names) <= len(rows)]
    out = ["| launch | first resident | released | last block released | SMs | until the next release |",
           "| --- | --- | --- | --- | --- | --- |"]
    for j, name in enumerate(names):
        launches = [rows[i - 1 + j] for i in at]
        base = [rows[i][3] for i in at]
        med = lambda f: statistics.median(f(r, b) for r, b in zip(launches, base))
        out.append(f"| {name} | {med(lambda r, b: r[2] - b):.2f} | {med(lambda r, b: r[3] - b):.2f} | "
                   f"{med(lambda r, b: r[4] - b):.2f} | {med(lambda r, b: r[1]):.0f} | {med(lambda r, b: r[5]):.2f} |")
    out.append(f"\n{len(at)} layers")
    return "\n".join(out)


def layers_of(rows, attention_grid, n=len(NAMES)):
    """Each layer's n launches: the anchor's predecessor (Q/K/V) and the anchor, then the rest."""
    at = [i for i, (g, _) in enumerate(rows) if g == attention_grid]
    return [rows[i - 1:i - 1 + n] for i in at if i >= 1 and i - 1 + n <= len(rows)]


def summary(rows, attention_grid, names=NAMES):
    groups = collections.defaultdict(list)
    for layer in layers_of(rows, attention_grid, len(names)):
        groups[(layer[0][0], layer[-1][0])].append(layer)
    out = ["| layers (Q/K/V grid, down grid) | " + " | ".join(names) + " | layer |",
           "| --- |" + " --- |" * (len(names) + 1)]
    for (qkv, down), layers in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        med = [statistics.median(layer[i][1] for layer in layers) for i in range(len(names))]
        total = statistics.median(sum(t for _, t in layer) for layer in layers)
        out.append(f"| {len(layers)} ({qkv}, {down}) | " + " | ".join(f"{m:.2f}" for m in med) + f" | {total:.1f} |")
    out.append(f"\nthe step: {sum(t for _, t in rows):.1f} us over {len(rows)} launches")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--attention-grid", type=int, default=64)
    ap.add_argument("--rope-grid", type=int, default=0, help="layers of seven launches anchored on this RoPE kernel grid")
    ap.add_argument("--timeline", action="store_true", help="where each launch's blocks arrive (round 48)")
    args = ap.parse_args()
    with open(args.trace) as f:
        lines = f.readlines()
    rows = read_trace(lines)
    anchor, names = (args.rope_grid, NAMES_UNFUSED) if args.rope_grid > 0 else (args.attention_grid, NAMES)
    if args.timeline:
        print(timeline(read_trace(lines, full=True), anchor, names))
        return
    if not rows:
        sys.exit(f"{args.trace}: no trace rows")
    if not layers_of(rows, anchor, len(names)):
        sys.exit(f"{args.trace}: no launch of grid {anchor} with a layer around it; pass --attention-grid or --rope-grid")
    print(summary(rows, anchor, names))


if __name__ == "__main__":
    main()
