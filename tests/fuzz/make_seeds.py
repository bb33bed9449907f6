#!/usr/bin/env python3
"""make_seeds.py TARGET OUTDIR --fixtures DIR: writes a fuzz target's seed corpus.

Each target's seeds come from tests/fuzz/seeds/<target>.py, which defines
generate(outdir: pathlib.Path, fixtures: pathlib.Path) -> None. The fixtures are real files
(../shared/fixtures); a missing fixture directory is an error, not an empty corpus.
"""
import argparse
import importlib.util
import pathlib
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("outdir", type=pathlib.Path)
    ap.add_argument("--fixtures", type=pathlib.Path, required=True)
    args = ap.parse_args()
    if not args.fixtures.is_dir():
        print(f"make_seeds: fixtures not found at {args.fixtures}", file=sys.stderr)
        return 1
    module_path = pathlib.Path(__file__).parent / "seeds" / f"{args.target}.py"
    if not module_path.exists():
        print(f"make_seeds: no seed generator {module_path}", file=sys.stderr)
        return 1
    spec = importlib.util.spec_from_file_location(args.target, module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args.outdir.mkdir(parents=True, exist_ok=True)
    module.generate(args.outdir, args.fixtures)
    if not any(args.outdir.iterdir()):
        print(f"make_seeds: {args.target} produced no seeds", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
