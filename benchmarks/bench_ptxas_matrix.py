"""Re-runnable benchmark for the ptxas conformance matrix of issue 6.

    python benchmarks/bench_ptxas_matrix.py [--jobs N] [--full-codegen] [--covering] [--same-ptx]
                                            [--ptxas PATH] [--json]

Runs the same check as generated/tests/test_ptxas_conformance.py (every
valid form of the spec on every (target, PTX ISA version) pair, near misses on
every target, renamed targets) and reports its wall time, the number of
ptxas runs and kernels, and any disagreement. ``--full-codegen`` generates
code for every pair instead of verifying all pairs and generating code once
per target (slower; same verdict). ``--covering`` checks CI's plan, as CI's conformance
test does (ptxgen.probe.covering.Plan: each instruction's value forms on every pair, the
rest of its covering array at the newest version of one target).
The budget is 3 minutes on the 2-core CI machine. ``--same-ptx`` also compiles, for
one form per instruction family, a kernel calling the generated wrapper and one
with hand-written inline asm and reports whether nvcc emits the same PTX
instruction sequence for both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from ptxas import same_ptx, wrappers  # noqa: E402

from ptxgen.isa import ptx  # noqa: E402
from ptxgen.probe import Assembler, run_matrix  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--full-codegen", action="store_true")
    ap.add_argument("--covering", action="store_true")
    ap.add_argument("--same-ptx", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ptxas", default=None, help="ptxas binary (default: the one on PATH)")
    args = ap.parse_args()
    import shutil

    exe = args.ptxas or shutil.which("ptxas")
    if exe is None:
        sys.exit("ptxas is not on PATH")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip().splitlines()[-1]
    start = time.perf_counter()
    iset = ptx.instruction_set()
    forms = sum(len(i.forms) for i in iset.instructions)
    report = run_matrix(iset, Assembler.open(exe), jobs=args.jobs,
                        full_codegen=args.full_codegen, covering=args.covering)
    wall = time.perf_counter() - start
    problems = [p for v in report.mismatches.values() for p in v]
    res = {
        "ptxas": version,
        "jobs": args.jobs,
        "full_codegen": args.full_codegen,
        "forms": forms,
        "forms_checked_per_pair": report.forms,
        "pairs": len(iset.targets.pairs()),
        "form_x_pair_checks": report.kernels,
        "near_misses": report.near_misses,
        "checks": report.runs,
        "wall_s": round(wall, 1),
        "disagreements": len(problems),
    }
    if args.same_ptx:
        if wrappers.nvcc() is None:
            sys.exit("nvcc is not on PATH")
        same = {}
        for case in same_ptx.CASES:
            mine, hand, _ = same_ptx.compare(case)
            same[f"{case.family} ({case.arch}, {len(mine)} instructions)"] = mine == hand
        res["same_ptx_as_hand_written_asm"] = same
        problems += [k for k, ok in same.items() if not ok]
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:>20}: {v}")
        for p in problems[:20]:
            print("  ", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
