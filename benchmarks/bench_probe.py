"""Re-runnable benchmark of ``ptxgen probe`` (issue 13: <= 5 minutes on the 2-core machine).

    python benchmarks/bench_probe.py --ptxas PATH [--spec DIR] [--jobs N] [--runs R] [--cover]
                                     [--only FILE.yaml]...

Runs ``ptxgen probe --ptxas PATH --spec DIR --json`` as a user would (a fresh
process, no assembly cache: PTXGEN_PROBE_CACHE is unset) R times and prints the
wall time of each run, the median, the number of kernels assembled, ptxas runs
and proposals. Default: the ptxas of the test dependency nvidia-cuda-nvcc (13.5)
against spec/. ``--only`` probes a copy of the spec with only these instruction files
(and no descriptors): issue 25's async/fence additions were checked with
``--only cp_async_bulk.yaml --only cp_async_bulk_tensor.yaml`` and
``--only fence.yaml --only mbarrier.yaml --only tensormap.yaml``, each with ptxas 13.5
and 13.0.
``--cover`` times CI's probe (``ptxgen probe --cover``: the conformance
matrix's plan of forms, every candidate value once) instead of the whole one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_ptxas() -> str:
    from importlib.metadata import distribution

    return str(distribution("nvidia-cuda-nvcc").locate_file("nvidia/cu13/bin/ptxas"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxas", default=None)
    ap.add_argument("--spec", default=str(ROOT / "spec"))
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", action="append", default=[],
                    help="an instruction file of the spec to probe alone (repeatable)")
    ap.add_argument("--cover", action="store_true", help="CI's probe (ptxgen probe --cover)")
    args = ap.parse_args()
    if args.only:
        args.spec = _subset(Path(args.spec), args.only)
    exe = args.ptxas or default_ptxas()
    env = {k: v for k, v in os.environ.items() if k != "PTXGEN_PROBE_CACHE"}
    cmd = [sys.executable, "-m", "ptxgen", "probe", "--ptxas", exe, "--spec", args.spec,
           "--json"] + (["--jobs", str(args.jobs)] if args.jobs else []) + \
        (["--cover"] if args.cover else [])
    walls = []
    result: dict[str, object] = {}
    for _ in range(args.runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env,
                              cwd=ROOT)
        walls.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"ptxgen probe exited {proc.returncode}: {proc.stderr[-2000:]}")
        result = json.loads(proc.stdout)
    stats = result["stats"] if isinstance(result.get("stats"), dict) else {}
    print(json.dumps({
        "ptxas": result.get("ptxas"), "spec": args.spec, "jobs": args.jobs or os.cpu_count(),
        "wall_s": [round(w, 1) for w in walls], "median_s": round(statistics.median(walls), 1),
        "exit_code": result.get("exit_code"),
        "proposals": len(result.get("proposals", [])),  # type: ignore[arg-type]
        "kernels": stats.get("kernels"), "checks": stats.get("runs"),
        "pairs": stats.get("pairs"), "near_misses": stats.get("near_misses"),
        "candidates": stats.get("candidates"), "load_average": os.getloadavg(),
    }, indent=2))


def _subset(spec: Path, files: list[str]) -> str:
    """A temporary copy of ``spec`` with only these instruction files."""
    out = Path(tempfile.mkdtemp(prefix="bench-probe-")) / "spec"
    (out / "instructions").mkdir(parents=True)
    (out / "descriptors").mkdir()
    shutil.copytree(spec / "schema", out / "schema")
    shutil.copy(spec / "targets.yaml", out / "targets.yaml")
    for name in files:
        shutil.copy(spec / "instructions" / name, out / "instructions" / name)
    return str(out)


if __name__ == "__main__":
    main()
