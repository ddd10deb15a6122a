"""Re-runnable benchmark of ``ptxgen doc check`` (issue 25: the whole PTX ISA 9.4 document in
<= 30 s on the 2-core machine without assemblers, <= 5 minutes with both).

    python benchmarks/bench_doc.py [--doc DIR] [--spec DIR] [--ptxas PATH]... [--runs R]

Runs ``ptxgen doc check DOC --spec DIR --json [--ptxas ...]`` as a user would (a fresh
process, no assembly cache: PTXGEN_PROBE_CACHE is unset) R times and prints the wall time
of each run, the median, the sections read and the proposals by kind. Default: the
document at ../shared/ptx-isa-9.4 against spec/, without assemblers; ``--both`` adds the
ptxas of CUDA 13.0 and 13.5 (tests/toolkits.py finds them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed_run(cmd: list[str]) -> tuple[float, dict[str, object]]:
    """(wall seconds, the --json answer) of one fresh process without an assembly cache."""
    env = {k: v for k, v in os.environ.items() if k != "PTXGEN_PROBE_CACHE"}
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"ptxgen doc check exited {proc.returncode}: {proc.stderr[-2000:]}")
    answer: dict[str, object] = json.loads(proc.stdout)
    return wall, answer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", default=str(ROOT.parent / "shared" / "ptx-isa-9.4"))
    ap.add_argument("--spec", default=str(ROOT / "spec"))
    ap.add_argument("--ptxas", action="append", default=[])
    ap.add_argument("--both", action="store_true", help="ptxas 13.0 and 13.5")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    assemblers = list(args.ptxas)
    if args.both:
        sys.path.insert(0, str(ROOT / "tests"))
        import toolkits

        assemblers += [toolkits.require("ptxas", "13.0"), toolkits.require("ptxas", "13.5")]
    cmd = [sys.executable, "-m", "ptxgen", "doc", "check", args.doc, "--spec", args.spec,
           "--json"] + [x for p in assemblers for x in ("--ptxas", p)]
    timed = [timed_run(cmd) for _ in range(args.runs)]
    walls = [w for w, _ in timed]
    result = timed[-1][1]
    print(json.dumps({
        "doc": args.doc, "spec": args.spec, "assemblers": assemblers,
        "wall_s": [round(w, 1) for w in walls], "median_s": round(statistics.median(walls), 1),
        "sections": result.get("sections"), "counts": result.get("counts"),
        "proposals": len(result.get("proposals", [])),  # type: ignore[arg-type]
    }, indent=2))


if __name__ == "__main__":
    main()
