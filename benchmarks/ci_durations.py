"""Where CI's time goes: the whole suite as CI runs it, with per-file and per-test times.

    python benchmarks/ci_durations.py [--junit FILE] [-- PYTEST ARGS...]
    python benchmarks/ci_durations.py --report FILE [--compare OLD.xml]

Runs ``CI=true nice -n 5 python -m pytest -q -p no:cacheprovider --junitxml FILE`` (the
suite exactly as ``.ci/run`` runs it, no GPU), then prints the wall time, the load
average before and after (the machine is shared: say it with every figure), and the
seconds per test file (the sum of its tests' setup, call and teardown, module-scoped
fixtures included) from the JUnit XML. ``--report`` only reads an existing XML;
``--compare`` prints a second XML's per-file times beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def per_file(junit: Path) -> dict[str, float]:
    """{test file: seconds} from a JUnit XML written by pytest."""
    out: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).getroot().iter("testcase"):
        cls = case.get("classname", "")
        parts = cls.split(".")
        # tests.test_x / generated.tests.test_x / tests.hostile.test_corpus[.Class]
        module = next((".".join(parts[:i + 1]) for i, p in enumerate(parts)
                       if p.startswith("test_")), cls)
        out[module.replace(".", "/") + ".py"] += float(case.get("time", 0.0))
    return dict(out)


def report(junit: Path, compare: Path | None = None) -> None:
    now = per_file(junit)
    old = per_file(compare) if compare else {}
    names = sorted(set(now) | set(old), key=lambda n: -max(now.get(n, 0), old.get(n, 0)))
    head = f"{'file':60} {'seconds':>9}" + (f" {'before':>9}" if compare else "")
    print(head)
    for n in names:
        line = f"{n:60} {now.get(n, 0):9.1f}"
        if compare:
            line += f" {old.get(n, 0):9.1f}"
        print(line)
    total = f"{'sum of tests':60} {sum(now.values()):9.1f}"
    if compare:
        total += f" {sum(old.values()):9.1f}"
    print(total)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--junit", type=Path, default=Path("/tmp/ptxgen-ci-durations.xml"))
    ap.add_argument("--report", type=Path, help="only print the times of this JUnit XML")
    ap.add_argument("--compare", type=Path, help="a JUnit XML of an earlier run")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    if args.report:
        report(args.report, args.compare)
        return 0
    load0 = os.getloadavg()
    start = time.monotonic()
    cmd = ["nice", "-n", "5", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "--durations=40", f"--junitxml={args.junit}", *args.pytest_args]
    rc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "CI": "true"}, check=False).returncode
    wall = time.monotonic() - start
    load1 = os.getloadavg()
    print(f"\npytest exit {rc}; wall {wall / 60:.1f} min; load average before "
          f"{load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}, after "
          f"{load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f} (1/5/15 min)")
    report(args.junit, args.compare)
    return rc


if __name__ == "__main__":
    sys.exit(main())
