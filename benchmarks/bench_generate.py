"""Where ``ptxgen generate`` spends its CPU time, stage by stage, per 10,000 forms, at 1x
and at Kx the spec's size (issue 26, item 4: <= 0.5 s per 10,000 forms on 2 cores).

    python benchmarks/bench_generate.py [--runs 5] [--copies 10] [--spec DIR]

Each run is a fresh process (byte-code caching on, the spec cache of ``ptxgen.cache``
warm, as a user's second ``generate``) that times, in CPU seconds of that process
(``time.process_time``): import of the pipeline, load (the spec cache, or parse and
validate), the model, the enumeration of every form, each emitter in one process
(``PTXGEN_JOBS=1``: the sum of every job), the manifest and the write to a temporary
folder. The figures are those of the run with the least total CPU time (the machine is
shared: other jobs only ever add time; and other users of the spec cache may evict its
entry, which makes ``load`` parse and validate again). Then the whole command as a user
runs it, ``ptxgen generate --out TMP`` on both CPUs (``jobs``), its CPU (user + sys of
the process and its workers) and wall time, median of the runs. The synthetic spec
(``synthetic_spec.py``: every instruction file repeated under new names, K times the
forms) shows whether the cost per form stays flat. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

STAGES = r'''
import json, sys, tempfile, time
t0 = time.process_time()
from pathlib import Path
from ptxgen import manifest, pipeline
from ptxgen.emit import _emitters
from ptxgen.model import build_model
from ptxgen.model.selection import with_selection
from ptxgen.write import write_tree
out = {"import": time.process_time() - t0}
spec_dir = Path(sys.argv[1])
t = time.process_time()
docs = pipeline.load_documents(spec_dir)
out["load"] = time.process_time() - t
t = time.process_time()
spec = with_selection(build_model(docs), None)
out["model"] = time.process_time() - t
t = time.process_time()
out["forms"] = sum(len(i.forms) for i in spec.instructions.instructions)
out["enumerate"] = time.process_time() - t
files = {}
for m in _emitters():
    t = time.process_time()
    if hasattr(m, "parts"):
        for _, job in m.parts(spec):
            files.update(job())
    else:
        files.update(m.emit(spec))
    out["emit " + m.__name__.removeprefix("ptxgen.emit.")] = time.process_time() - t
t = time.process_time()
files = dict(sorted(files.items()))
files[manifest.NAME] = manifest.build(files, manifest.input_digest(spec_dir, None, None),
                                      None, None)
out["manifest"] = time.process_time() - t
t = time.process_time()
with tempfile.TemporaryDirectory() as tmp:
    write_tree(Path(tmp) / "out", files, protect=(spec_dir,), cwd=Path(tmp))
out["write"] = time.process_time() - t
out["total"] = time.process_time() - t0
print(json.dumps(out))
'''


def stages(spec_dir: Path, runs: int) -> dict[str, float]:
    results = []
    for _ in range(runs + 1):  # the first warms the caches
        res = subprocess.run([sys.executable, "-c", STAGES, str(spec_dir)], check=True,
                             capture_output=True, text=True, env=ENV | {"PTXGEN_JOBS": "1"},
                             cwd=ROOT)
        results.append(json.loads(res.stdout))
    return min(results[1:], key=lambda r: r["total"])


def whole(spec_dir: Path, runs: int) -> tuple[float, float]:
    """Median (CPU, wall) of ``ptxgen generate --spec DIR --out TMP`` on every CPU."""
    cpu, wall = [], []
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "ptxgen", "generate", "--spec", str(spec_dir),
               "--out", str(Path(tmp) / "out")]
        subprocess.run(cmd, check=True, capture_output=True, env=ENV, cwd=tmp)
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=ENV, cwd=tmp)
            wall.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def report(name: str, spec_dir: Path, runs: int) -> dict[str, float]:
    s = stages(spec_dir, runs)
    cpu, wall = whole(spec_dir, runs)
    forms = s["forms"]
    print(f"\n{name}: {int(forms)} forms (load average {os.getloadavg()[0]:.1f})")
    for k, v in s.items():
        if k != "forms":
            print(f"  {k:32s} {v:7.3f} s CPU   {v / forms * 1e4:6.3f} s per 10k forms")
    print(f"  ptxgen generate (both CPUs): CPU {cpu:.2f} s ({cpu / forms * 1e4:.3f} s per 10k "
          f"forms), wall {wall:.2f} s ({wall / forms * 1e4:.3f} s per 10k forms)")
    return s | {"cpu": cpu, "wall": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--copies", type=int, default=10, help="the synthetic spec's size (0: none)")
    ap.add_argument("--spec", type=Path, default=ROOT / "spec")
    args = ap.parse_args()
    one = report("spec", args.spec.resolve(), args.runs)
    if args.copies > 1:
        with tempfile.TemporaryDirectory() as tmp:
            big = Path(tmp) / "spec"
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "synthetic_spec.py"),
                            str(big), "--copies", str(args.copies), "--spec", str(args.spec)],
                           check=True, capture_output=True)
            many = report(f"synthetic spec, {args.copies}x", big, max(1, args.runs // 2))
        ratio = (many["total"] / many["forms"]) / (one["total"] / one["forms"])
        print(f"\nCPU per form at {args.copies}x / at 1x (one process, stage sum): {ratio:.2f}")


if __name__ == "__main__":
    main()
