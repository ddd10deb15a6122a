"""Re-runnable benchmark for the compile-time figures of issue 5.

    python benchmarks/bench_cpp_compile.py [--runs 15] [--arch sm_100a] [--json]
    python benchmarks/bench_cpp_compile.py --instructions [--arch sm_90a]

Compiles three one-line CUDA translation units with nvcc (``-c``, C++17, one real
architecture) and reports the median wall time of each, each run a fresh nvcc process:
  - empty:     an empty .cu file
  - umbrella:  #include "ptxgen/ptxgen.hpp" (generated/include)
  - cuda/ptx:  #include <cuda/ptx> (CCCL, shipped with the CUDA toolkit)
and the ratios umbrella/empty (issue 5 asks for <= 1.10) and cuda/ptx/empty. The
three are run interleaved, round after round, so that drift in machine load affects
them alike. Wall time is what the issue measures; the CPU time of nvcc and its children
(user + system) is printed too, as it is less sensitive to other load on the machine.
With --instructions each TU is compiled once under valgrind (callgrind, following every
process nvcc starts) and the instructions executed are counted: slow (minutes), but the
same on every run, whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "generated" / "include"

SOURCES = {
    "empty": "",
    "umbrella": '#include "ptxgen/ptxgen.hpp"\n',
    "cuda/ptx": "#include <cuda/ptx>\n",
}


def compile_once(nvcc: str, src: Path, out: Path, arch: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of nvcc and all it ran)."""
    cmd = [nvcc, "-std=c++17", f"-arch={arch}", f"-I{INCLUDE}", "-c", str(src), "-o", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions_once(nvcc: str, src: Path, out: Path, arch: str, tmp: Path) -> int:
    """Instructions executed by nvcc and every process it starts (callgrind)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.exit("--instructions needs valgrind")
    folder = Path(tempfile.mkdtemp(dir=tmp))
    cmd = [valgrind, "--tool=callgrind", "--trace-children=yes",
           f"--callgrind-out-file={folder}/%p.out", nvcc, "-std=c++17", f"-arch={arch}",
           f"-I{INCLUDE}", "-c", str(src), "-o", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = 0
    for dump in folder.glob("*.out"):
        counts = [int(line.split()[1]) for line in dump.read_text(errors="replace").splitlines()
                  if line.startswith(("summary:", "totals:"))]
        total += max(counts, default=0)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--arch", default="sm_100a")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions under callgrind instead of timing")
    args = ap.parse_args()
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        sys.exit("nvcc is not on the PATH")
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for i, (name, text) in enumerate(SOURCES.items()):
            files[name] = Path(tmp) / f"tu{i}.cu"
            files[name].write_text(text)
        out = Path(tmp) / "out.o"
        if args.instructions:
            counts = {name: instructions_once(nvcc, src, out, args.arch, Path(tmp))
                      for name, src in files.items()}
            print(f"-arch={args.arch}; instructions executed (callgrind)")
            for name, n in counts.items():
                print(f"  {name:10s} {n / 1e6:10.1f} M  {n / counts['empty']:5.3f}x")
            return
        wall: dict[str, list[float]] = {name: [] for name in SOURCES}
        cpu: dict[str, list[float]] = {name: [] for name in SOURCES}
        for src in files.values():  # warm-up: page cache, nvcc's own files
            compile_once(nvcc, src, out, args.arch)
        for _ in range(args.runs):
            for name, src in files.items():
                w, c = compile_once(nvcc, src, out, args.arch)
                wall[name].append(w)
                cpu[name].append(c)
    med = {name: statistics.median(t) for name, t in wall.items()}
    med_cpu = {name: statistics.median(t) for name, t in cpu.items()}
    ratios = {f"{name}/empty": med[name] / med["empty"] for name in SOURCES if name != "empty"}
    ratios_cpu = {f"{name}/empty": med_cpu[name] / med_cpu["empty"]
                  for name in SOURCES if name != "empty"}
    version = subprocess.run([nvcc, "--version"], check=True, capture_output=True,
                             text=True).stdout.strip().splitlines()[-1]
    if args.json:
        print(json.dumps({"nvcc": version, "arch": args.arch, "runs": args.runs,
                          "median_wall_s": med, "median_cpu_s": med_cpu,
                          "ratios_wall": ratios, "ratios_cpu": ratios_cpu}, indent=2))
        return
    print(f"{version}; -arch={args.arch}; median of {args.runs} runs (wall / CPU)")
    for name in SOURCES:
        print(f"  {name:10s} {med[name] * 1000:8.1f} ms  {med_cpu[name] * 1000:8.1f} ms")
    for name in ratios:
        print(f"  {name:16s} {ratios[name]:5.3f}x   {ratios_cpu[name]:5.3f}x")


if __name__ == "__main__":
    main()
