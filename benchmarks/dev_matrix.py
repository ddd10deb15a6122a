"""The ptxas conformance matrix of chosen instruction files only (developing a family).

python benchmarks/dev_matrix.py cvt.yaml [more.yaml ...] [--release 13.5] [--covering]
--covering checks each instruction's covering array of forms (every value and pair of
values) instead of every valid form: minutes less on a loaded machine, for iterating.
Loads the spec and keeps the named files' instructions, runs
ptxgen.probe.run_matrix with each toolkit's ptxas and prints every mismatch.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import toolkits  # noqa: E402

from ptxgen.pipeline import load_model  # noqa: E402
from ptxgen.probe import Assembler, run_matrix  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--release", action="append")
    ap.add_argument("--covering", action="store_true")
    args = ap.parse_args()
    whole = load_model(ROOT / "spec", use_cache=False).instructions
    assert whole is not None
    # The named files' instructions of the whole spec (descriptors and the instructions
    # they name stay loadable); spec_file is the path the loader read.
    iset = dataclasses.replace(whole, instructions=tuple(
        i for i in whole.instructions if Path(i.spec_file).name in args.files))
    bad = 0
    for release in args.release or toolkits.RELEASES:
        asm = Assembler.open(toolkits.require("ptxas", release))
        rep = run_matrix(iset, asm, covering=args.covering)
        print(f"ptxas {release}: {rep.kernels} kernels, {rep.runs} runs, "
              f"{rep.seconds:.1f} s, {rep.near_misses} near misses")
        for check, problems in rep.mismatches.items():
            for p in problems[:15]:
                bad += 1
                print(f"  {check}: {p}")
            if len(problems) > 15:
                print(f"  {check}: ... {len(problems) - 15} more")
        messages = {r.message for i in iset.instructions for r in i.rules}
        for m in sorted(messages - rep.rules_probed - rep.rules_beyond):
            print(f"  rule not probed: {m}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
