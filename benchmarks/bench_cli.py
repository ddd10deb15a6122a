"""Re-runnable benchmark for the performance figures of issue 4.

    python benchmarks/bench_cli.py [--runs 15]

Measures wall time of whole commands (median of N runs, each a fresh process,
as a user would see it) and of one Python ``encode()`` call:
  - ptxgen generate (whole spec, and the descriptor tables alone, into temporary folders)
  - ptxgen check (against the committed generated/)
  - ptxgen encode / decode versus ``python3 -c pass``
  - InstrDescF16(...).encode() per call (timeit)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# Measure the normal configuration: byte-code caching on (some shells and CI set
# PYTHONDONTWRITEBYTECODE, which makes every run recompile every module).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(cmds: dict[str, list[str]], runs: int) -> dict[str, float]:
    """Median wall time of each command; the commands are run interleaved, round after
    round, so that drifting machine load affects them alike."""
    for cmd in cmds.values():  # warm-up (byte-code caches, jinja cache)
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=ENV)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            start = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=ENV)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    # The console script next to this interpreter, not a shell shim (pyenv's shims add
    # ~15 ms of bash to every call, which would be measured against ptxgen).
    script = Path(sysconfig.get_path("scripts")) / "ptxgen"
    ptxgen = str(script) if script.exists() else shutil.which("ptxgen")
    if ptxgen is None:
        sys.exit("ptxgen is not installed (pip install -e .)")
    out = Path(tempfile.mkdtemp()) / "generated"
    try:
        res = wall({
            "python -c pass": [sys.executable, "-c", "pass"],
            "encode": [ptxgen, "encode", "instr_desc", "--kind", "f16", "dtype=f32",
                       "atype=bf16", "btype=bf16", "n=256", "m=128"],
            "decode": [ptxgen, "decode", "smem_desc", "0x4000404000010040", "--json"],
            "check": [ptxgen, "check"],
        }, args.runs)
        # The descriptor tables alone (the spec of issue 4), in a temporary spec folder.
        dspec = out.parent / "descriptor-spec"
        shutil.copytree(ROOT / "spec" / "descriptors", dspec / "descriptors")
        shutil.copytree(ROOT / "spec" / "schema", dspec / "schema")
        res.update(wall({"generate": [ptxgen, "generate", "--out", str(out)],
                         "generate descriptors": [ptxgen, "generate", "--spec", str(dspec),
                                                  "--out", str(out.parent / "dout")]},
                        max(5, args.runs // 2)))
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    from ptxgen.isa import InstrDescF16

    desc = InstrDescF16(dtype=InstrDescF16.Dtype.F32, atype=InstrDescF16.Atype.BF16,
                        btype=InstrDescF16.Btype.BF16, n=256, m=128)
    n = 200_000
    per_call = min(timeit.repeat(desc.encode, number=n, repeat=5)) / n
    base = res["python -c pass"]
    report = {
        "python_c_pass_s": round(base, 4),
        "generate_s": round(res["generate"], 4),
        "generate_descriptors_only_s": round(res["generate descriptors"], 4),
        "check_s": round(res["check"], 4),
        "encode_s": round(res["encode"], 4),
        "encode_ratio": round(res["encode"] / base, 3),
        "decode_s": round(res["decode"], 4),
        "decode_ratio": round(res["decode"] / base, 3),
        "python_encode_us": round(per_call * 1e6, 3),
        "runs": args.runs,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for k, v in report.items():
            print(f"{k:20} {v}")


if __name__ == "__main__":
    main()
