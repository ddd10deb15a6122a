"""The whole matrices that CI samples: the compiler-driven tests with PTXGEN_FULL_MATRIX=1.

    python benchmarks/full_matrices.py [--only NAME ...] [-- PYTEST ARGS...]

CI (2 cores, 20 minutes for everything) runs covering samples of these matrices; this
runs each test file with PTXGEN_FULL_MATRIX=1, where it builds the whole matrix with the
same assertions:

  instr_wrappers      tests/test_instr_wrappers.py: every form of an instruction of up to
                      1,500 forms (covering arrays above), one form per (wrapper, support
                      signature) on every target, nvcc 13.0 and 13.5 (CI: each
                      instruction's value forms - every value, every support - one form per
                      signature per target and each pair on one target)
  gpu_kernels_build   tests/test_gpu_kernels_build.py: every GPU test library whole, as the
                      GPU gets it, the 1,070 sparse wgmma cases in 8 libraries (CI: device
                      code only, 85 covering cases in one library)
  cpp_crosscheck      tests/test_cpp_crosscheck.py: 1,500 samples per descriptor class and
                      request kind (CI: 300)
  tmem_addr_cutlass   tests/test_tmem_addr_cutlass.py: CuTe's Tensor Memory address of every
                      cell of 128 x 512 (CI: every lane, every 7th column)

and prints, per file, the pytest exit status, the wall time, the CPU time of pytest and
every compiler it ran, and the load average before and after (the machine may be shared:
say it with every figure). Exit status: 0 if every file passed, else 1.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "instr_wrappers": "tests/test_instr_wrappers.py",
    "gpu_kernels_build": "tests/test_gpu_kernels_build.py",
    "cpp_crosscheck": "tests/test_cpp_crosscheck.py",
    "tmem_addr_cutlass": "tests/test_tmem_addr_cutlass.py",
}


def run(path: str, pytest_args: list[str]) -> tuple[int, float, float]:
    """(pytest's exit status, wall seconds, CPU seconds of the process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    cmd = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider",
           "--durations=5", path, *pytest_args]
    env = {**os.environ, "PTXGEN_FULL_MATRIX": "1", "CI": "true"}
    rc = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rc, wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", choices=sorted(FILES),
                    help="run only this matrix (repeatable)")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    rows = []
    for name in args.only or list(FILES):
        load0 = os.getloadavg()
        rc, wall, cpu = run(FILES[name], args.pytest_args)
        load1 = os.getloadavg()
        rows.append((name, rc, wall, cpu, load0[0], load1[0]))
    print(f"\n{'matrix':20} {'exit':>4} {'wall s':>8} {'cpu s':>8}  load before/after")
    for name, rc, wall, cpu, l0, l1 in rows:
        print(f"{name:20} {rc:4d} {wall:8.1f} {cpu:8.1f}  {l0:.1f}/{l1:.1f}")
    return 0 if all(r[1] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
