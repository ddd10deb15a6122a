"""Re-runnable benchmark of the command-line figures (issues 4 and 14).

    python benchmarks/bench_cli.py [--runs 15] [--json] [--only generation]
                                   [--root DIR --ptxgen "CMD ..."]

Measures wall time of whole commands (median of N runs, each a fresh process, as a
user would see it, byte-code caching on; the commands run interleaved, round after
round, so that drifting load on a shared machine affects them alike) and prints
each figure with its goal:

  - issue 14: ``ptxgen generate`` of the whole spec <= 0.5 s, ``validate`` <= 0.3 s,
    ``generate --ptx-isa 8.6`` <= 0.5 s, ``diff --ptx-isa 8.6 9.0`` <= 1.0 s,
    ``check`` <= 0.3 s, and ``generate`` of a synthetic spec with 10x the forms (every
    instruction file repeated under new names, built in a temporary folder) in <= 10x
    the time of the same spec once (the per-form cost is printed);
  - issue 4: ``ptxgen encode`` / ``decode`` against ``python -c pass``, ``generate``
    of the descriptor tables alone, one Python ``encode()`` call.

``--root`` and ``--ptxgen`` measure another checkout (``--ptxgen`` is the command
that runs its ptxgen, e.g. ``"env PYTHONPATH=/x/pkgroot python -m ptxgen"``); the
synthetic spec is always built from ``--root``'s spec/. The load average is printed:
on a shared machine, compare figures taken together.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import timeit
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Measure the normal configuration: byte-code caching on (some shells and CI set
# PYTHONDONTWRITEBYTECODE, which makes every run recompile every module).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

COPIES = 10  # the synthetic spec has this many times the forms of spec/


#: Median CPU time (user + system) of each command of the last :func:`wall` calls: on a
#: shared machine the wall time grows with the load, the CPU time much less.
CPU: dict[str, float] = {}


def wall(cmds: Mapping[str, list[str]], runs: int, cwd: Path) -> dict[str, float]:
    """Median wall time of each command; the commands are run interleaved, round after
    round, so that drifting machine load affects them alike. Their CPU times go to
    :data:`CPU`."""
    def run(cmd: list[str]) -> None:
        # diff exits 1 when the versions differ: that is its answer, not a failure
        res = subprocess.run(cmd, cwd=cwd, check=False, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=ENV)
        if res.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stderr.decode()}")

    for cmd in cmds.values():  # warm-up (byte-code caches, jinja cache)
        run(cmd)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    cpu: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            run(cmd)
            times[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime
                             - before.ru_stime)
    CPU.update({name: statistics.median(t) for name, t in cpu.items()})
    return {name: statistics.median(t) for name, t in times.items()}


# -- the synthetic spec ------------------------------------------------------------------

def synthetic_spec(src: Path, dst: Path, copies: int) -> None:
    """``src`` (a spec folder) with every instruction file repeated ``copies`` times: the
    repeats are new files whose instructions, wrappers and notes carry the suffix
    ``_rN`` (examples' opcodes renamed with them), so the spec has ``copies`` times
    the instructions and forms and validates like the original."""
    import yaml

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for path in sorted((dst / "instructions").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        modeline = text.splitlines()[0]
        data = yaml.safe_load(text)
        for n in range(1, copies):
            out = _renamed(data, n)
            body = yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=1000)
            (path.parent / f"{path.stem}_r{n}.yaml").write_text(
                f"{modeline}\n# synthetic repeat {n} of {path.name}\n{body}", encoding="utf-8")


def _renamed(data: Mapping[str, Any], n: int) -> dict[str, Any]:
    notes = {note["id"]: f"{note['id']}-r{n}" for note in data.get("notes", ())}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (notes.get(v, v) if k == "note" and isinstance(v, str) else walk(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out: dict[str, Any] = walk(dict(data))
    out["title"] = f"{data['title']} (synthetic repeat {n})"
    for note in out.get("notes", ()):
        note["id"] = notes[note["id"]]
    for ins in out["instructions"]:
        old = ins["name"]
        ins["id"] = f"{ins['id']}_r{n}"
        ins["name"] = f"{old}_r{n}"
        for w in ins.get("wrappers", ()):
            w["name"] = f"{w['name']}_r{n}"
        for ex in ins.get("examples", ()):
            if ex["opcode"].startswith(old):
                ex["opcode"] = ins["name"] + ex["opcode"][len(old):]
    return out


def form_count(spec: Path) -> int:
    from ptxgen.pipeline import load_model

    iset = load_model(spec).instructions
    return sum(len(i.forms) for i in iset.instructions) if iset else 0


# -- main -------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=("all", "generation"), default="all",
                    help="generation: the issue 14 figures alone")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    ap.add_argument("--ptxgen", default=None, help="the command that runs its ptxgen")
    args = ap.parse_args()
    root = args.root.resolve()
    if args.ptxgen:
        ptxgen = shlex.split(args.ptxgen)
    else:
        # The console script next to this interpreter, not a shell shim (pyenv's shims
        # add ~15 ms of bash to every call, which would be measured against ptxgen).
        script = Path(sysconfig.get_path("scripts")) / "ptxgen"
        found = str(script) if script.exists() else shutil.which("ptxgen")
        if found is None:
            sys.exit("ptxgen is not installed (pip install -e .)")
        ptxgen = [found]
    tmp = Path(tempfile.mkdtemp(prefix="ptxgen-bench-"))
    report: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()],
                              "runs": args.runs}
    try:
        once, many = tmp / "spec-1x", tmp / f"spec-{COPIES}x"
        synthetic_spec(root / "spec", once, 1)
        synthetic_spec(root / "spec", many, COPIES)
        res = wall({
            "generate": [*ptxgen, "generate", "--out", str(tmp / "g")],
            "validate": [*ptxgen, "validate"],
            "generate --ptx-isa 8.6": [*ptxgen, "generate", "--ptx-isa", "8.6",
                                       "--out", str(tmp / "g86")],
            "diff --ptx-isa 8.6 9.0": [*ptxgen, "diff", "--ptx-isa", "8.6", "9.0"],
            "check": [*ptxgen, "check"],
        }, args.runs, root)
        scale = wall({
            "generate 1x": [*ptxgen, "generate", "--spec", str(once), "--out",
                            str(tmp / "o1")],
            f"generate {COPIES}x": [*ptxgen, "generate", "--spec", str(many), "--out",
                                    str(tmp / "o10")],
        }, max(3, args.runs // 3), root)
        forms_1, forms_n = form_count(once), form_count(many)
        t1, tn = scale["generate 1x"], scale[f"generate {COPIES}x"]
        goals = {"generate": 0.5, "validate": 0.3, "generate --ptx-isa 8.6": 0.5,
                 "diff --ptx-isa 8.6 9.0": 1.0, "check": 0.3}
        report["figures"] = [
            {"figure": name, "median_s": round(res[name], 4), "goal_s": goal,
             "ok": res[name] <= goal, "cpu_s": round(CPU[name], 4)}
            for name, goal in goals.items()]
        report["scaling"] = {
            "forms_1x": forms_1, f"forms_{COPIES}x": forms_n,
            "generate_1x_s": round(t1, 4), f"generate_{COPIES}x_s": round(tn, 4),
            "ratio": round(tn / t1, 2), "goal_ratio": float(COPIES),
            "ok": tn / t1 <= COPIES,
            "per_form_us": round((tn - t1) / (forms_n - forms_1) * 1e6, 1),
            "fixed_s": round(t1 - (tn - t1) / (forms_n - forms_1) * forms_1, 4),
            "cpu_1x_s": round(CPU["generate 1x"], 4),
            f"cpu_{COPIES}x_s": round(CPU[f"generate {COPIES}x"], 4),
            "cpu_per_form_us": round((CPU[f"generate {COPIES}x"] - CPU["generate 1x"])
                                     / (forms_n - forms_1) * 1e6, 1)}
        if args.only == "all":
            res.update(_issue4(ptxgen, tmp, root, args.runs))
            base = res["python -c pass"]
            report["issue4"] = {
                "python_c_pass_s": round(base, 4),
                "generate_descriptors_only_s": round(res["generate descriptors"], 4),
                "encode_ratio": round(res["encode"] / base, 3),
                "decode_ratio": round(res["decode"] / base, 3),
                "python_encode_us": round(res["python encode"] * 1e6, 3)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"load average {report['load_average']}, medians of {args.runs} interleaved runs")
    print(f"{'figure':28} {'median':>8} {'goal':>8}      {'cpu':>7}")
    for f in report["figures"]:
        print(f"{f['figure']:28} {f['median_s']:7.3f}s {f['goal_s']:7.2f}s "
              f"{'ok  ' if f['ok'] else 'OVER'} {f['cpu_s']:7.3f}s")
    s = report["scaling"]
    print(f"{'generate ' + str(COPIES) + 'x forms':28} {s['ratio']:7.2f}x {COPIES:7.2f}x "
          f"{'ok  ' if s['ok'] else 'OVER'}  ({s['forms_1x']} -> {s[f'forms_{COPIES}x']} "
          f"forms: {s['generate_1x_s']:.3f} s -> {s[f'generate_{COPIES}x_s']:.3f} s; "
          f"{s['per_form_us']} us per form + {s['fixed_s']:.3f} s fixed; cpu "
          f"{s['cpu_1x_s']:.3f} s -> {s[f'cpu_{COPIES}x_s']:.3f} s, "
          f"{s['cpu_per_form_us']} us per form)")
    for k, v in report.get("issue4", {}).items():
        print(f"{k:28} {v}")


def _issue4(ptxgen: list[str], tmp: Path, root: Path, runs: int) -> dict[str, float]:
    res = wall({
        "python -c pass": [sys.executable, "-c", "pass"],
        "encode": [*ptxgen, "encode", "instr_desc", "--kind", "f16", "dtype=f32",
                   "atype=bf16", "btype=bf16", "n=256", "m=128"],
        "decode": [*ptxgen, "decode", "smem_desc", "0x4000404000010040", "--json"],
    }, runs, root)
    # The descriptor tables alone (the spec of issue 4), in a temporary spec folder.
    dspec = tmp / "descriptor-spec"
    shutil.copytree(root / "spec" / "descriptors", dspec / "descriptors")
    shutil.copytree(root / "spec" / "schema", dspec / "schema")
    res.update(wall({"generate descriptors": [*ptxgen, "generate", "--spec", str(dspec),
                                              "--out", str(tmp / "dout")]},
                    max(5, runs // 2), root))
    from ptxgen.isa import InstrDescF16

    desc = InstrDescF16(dtype=InstrDescF16.Dtype.F32, atype=InstrDescF16.Atype.BF16,
                        btype=InstrDescF16.Btype.BF16, n=256, m=128)
    n = 200_000
    res["python encode"] = min(timeit.repeat(desc.encode, number=n, repeat=5)) / n
    return res


if __name__ == "__main__":
    main()
