"""Re-runnable benchmark of ``ptxgen lint`` (issue 27: the PTX of a CUTLASS-size kernel,
about 100k lines, in <= 2 s on the 2-core machine; a source tree of 1,000 files in <= 10 s).

    python benchmarks/bench_lint.py [--lines N] [--files F] [--runs R]

Builds the PTX of examples/tcgen05_gemm/gemm.cu with nvcc (-arch=sm_100a, -ptx), repeats
its functions under new names until the module has N lines (default 100,000), and runs
``ptxgen lint FILE --json`` as a user would (a fresh process) R times: wall and CPU time of
each run, their medians, and what was checked. Also times ``python -c pass`` as the floor.
Then the same for a source tree of F files (default 1,000): the headers of the nvidia-cutlass
wheel (CUTLASS and CuTe, 802 files, every inline asm statement of the library), copied
again under new folder names until there are F.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def big_ptx(folder: Path, lines: int) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        sys.exit("nvcc (CUDA 13.0) is needed on the PATH")
    one = folder / "gemm.ptx"
    subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=sm_100a", f"-I{ROOT / 'generated/include'}",
                    "-ptx", str(ROOT / "examples/tcgen05_gemm/gemm.cu"), "-o", str(one)],
                   check=True)
    text = one.read_text()
    head, sep, body = text.partition(".address_size 64")
    names = sorted(set(re.findall(r"\.entry (\w+)", body)))
    parts, n, count = [head + sep + "\n"], 0, head.count("\n")
    while count < lines:
        copy = body
        for name in names:
            copy = copy.replace(name, f"{name}_{n}")
        parts.append(copy)
        count += copy.count("\n")
        n += 1
    out = folder / "big.ptx"
    out.write_text("".join(parts))
    return out


def source_tree(folder: Path, files: int) -> Path:
    from importlib.util import find_spec

    spec = find_spec("cutlass_library")
    if spec is None or spec.origin is None:
        sys.exit("the nvidia-cutlass test dependency is needed (pip install -e '.[test]')")
    include = Path(spec.origin).parent / "source" / "include"
    headers = sorted(p for p in include.rglob("*") if p.is_file())
    tree = folder / "tree"
    for i in range(files):
        src = headers[i % len(headers)]
        dst = tree / f"copy{i // len(headers)}" / src.relative_to(include)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return tree


def measure(target: Path, runs: int) -> dict[str, object]:
    walls, cpus, floor = [], [], []
    report: dict[str, object] = {}
    for _ in range(runs):
        floor.append(timed([sys.executable, "-c", "pass"])[0])
        wall, cpu, proc = timed([sys.executable, "-m", "ptxgen", "lint", str(target), "--json"])
        if proc.returncode not in (0, 1):
            sys.exit(f"ptxgen lint exited {proc.returncode}: {proc.stderr[-2000:]}")
        walls.append(wall)
        cpus.append(cpu)
        summary = json.loads(proc.stdout)["summary"]
        report = {k: v for k, v in summary.items() if k != "skipped_by_family"}
    return {"wall_s": [round(w, 3) for w in walls],
            "median_wall_s": round(statistics.median(walls), 3),
            "median_cpu_s": round(statistics.median(cpus), 3),
            "python_floor_s": round(statistics.median(floor), 3), "summary": report}


def timed(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ptx = big_ptx(Path(tmp), args.lines)
        tree = source_tree(Path(tmp), args.files)
        print(json.dumps({
            "ptx": {"lines": ptx.read_text().count("\n"), **measure(ptx, args.runs)},
            "sources": {"files": args.files, **measure(tree, args.runs)},
        }, indent=2))


if __name__ == "__main__":
    main()
