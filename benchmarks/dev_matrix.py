"""The ptxas conformance matrix of chosen instruction files only (developing a family).

python benchmarks/dev_matrix.py cvt.yaml [more.yaml ...] [--release 13.5] [--covering]
Builds a spec folder with spec/targets.yaml, spec/schema and the named files, runs
ptxgen.probe.run_matrix with each toolkit's ptxas and prints every mismatch (``--covering``:
each instruction's covering array, as CI's conformance test does, instead of every form).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
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
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec"
        (spec / "instructions").mkdir(parents=True)
        shutil.copy(ROOT / "spec/targets.yaml", spec)
        shutil.copytree(ROOT / "spec/schema", spec / "schema")
        for f in args.files:
            shutil.copy(ROOT / "spec/instructions" / f, spec / "instructions")
        iset = load_model(spec, use_cache=False).instructions
        assert iset is not None
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
