"""The output of every PTX ISA version view, written to a folder, so that a change of the
model can be shown to leave every view byte for byte as it was (issue 26, item 4).

    python benchmarks/check_views.py --out BEFORE [--versions 8.6,9.0] [--spec DIR]
    ... change the generator ...
    python benchmarks/check_views.py --out AFTER
    diff -r BEFORE AFTER            # no output: every view is unchanged

``--consumers 8.8,9.0`` writes support, lint and diff for those versions only (generate
for every one): the commands other than generate take their view from the same
:func:`ptxgen.model.versions.at`. ``--ptx DIR`` reads the PTX that lint checks from DIR
(``--ptx-only --out DIR`` writes it), for a machine without nvcc; one version per process
(``--versions X.Y``) runs the versions side by side on a machine with more CPUs.

For each PTX ISA version X.Y the spec lists, it writes:

* ``X.Y/generate/...``: every file ``ptxgen generate --ptx-isa X.Y`` writes, MANIFEST.json
  without its ``inputs`` digest (that digest covers the generator's sources, so it changes
  with any change of the generator; the files' hashes stay);
* ``X.Y/support.txt`` and ``X.Y/support.json``: ``ptxgen support - --ptx-isa X.Y`` (and
  ``--json``) of a sample of opcodes: every 5th form of the whole spec, each
  instruction's examples and a few opcodes that are no form;
* ``X.Y/lint.json``: ``ptxgen lint --ptx-isa X.Y --json`` of the PTX that nvcc (on the
  PATH) makes of examples/tcgen05_gemm (sm_100a) and examples/wgmma_gemm (sm_90a);
* ``X.Y/diff.json``: ``ptxgen diff --ptx-isa PREV X.Y --format json`` from the version
  before (the whole changelog of two views; the text format renders the same report).

Each command runs in this process (``ptxgen.cli.main``), as the program would; ``probe``
(which needs ptxas) is left out: it takes its view from the same
:func:`ptxgen.model.versions.at`. The whole run of 27 versions takes a few minutes of CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _main(args: list[str], stdin: str = "") -> tuple[int, str]:
    from ptxgen.cli import main

    out = io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(args)
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue()


def _opcodes(spec_dir: Path) -> list[str]:
    from ptxgen.pipeline import load_model

    spec = load_model(spec_dir)
    assert spec.instructions is not None
    out: list[str] = []
    for ins in spec.instructions.instructions:
        out += [f.opcode for f in ins.forms[::5]]
        out += [str(ex["opcode"]) for ex in ins.examples]
    out += ["add.f32", "nosuch.op", "mov.b32", "ld.global.nope.u32"]
    return list(dict.fromkeys(out))


def _example_ptx(folder: Path) -> list[str]:
    """The PTX of two examples (compiled once, with the generated headers of spec/)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        sys.exit("nvcc is needed on the PATH (for the PTX that lint reads)")
    folder.mkdir(parents=True)
    out = []
    for example, arch in (("tcgen05_gemm", "sm_100a"), ("wgmma_gemm", "sm_90a")):
        ptx = folder / f"{example}.ptx"
        subprocess.run([nvcc, "-std=c++17", "-O1", f"-arch={arch}",
                        f"-I{ROOT / 'generated/include'}", f"-I{ROOT / 'examples'}", "-ptx",
                        str(ROOT / "examples" / example / "gemm.cu"), "-o", str(ptx)],
                       check=True)
        out.append(str(ptx))
    return out


def write_views(spec_dir: Path, out: Path, versions: list[str] | None,
                ptx: Path | None = None, consumers: list[str] | None = None) -> None:
    from ptxgen.pipeline import load_model, render

    spec = load_model(spec_dir)
    assert spec.targets is not None
    every = list(spec.targets.versions)
    chosen = versions or every
    opcodes = "\n".join(_opcodes(spec_dir)) + "\n"
    lint_paths = ([str(p) for p in sorted(ptx.glob("*.ptx"))] if ptx is not None
                  else _example_ptx(out / "ptx"))
    for version in chosen:
        start = time.process_time()
        vdir = out / version
        for rel, data in render(spec_dir, version).items():
            if rel == "MANIFEST.json":
                manifest = json.loads(data)
                manifest.pop("inputs", None)
                data = json.dumps(manifest, indent=1, sort_keys=True).encode()
            path = vdir / "generate" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if consumers is not None and version not in consumers:
            print(f"{version}: {time.process_time() - start:.1f} s CPU (generate)", flush=True)
            continue
        base = ["--spec", str(spec_dir)] if spec_dir != ROOT / "spec" else []
        for name, extra in (("support.txt", []), ("support.json", ["--json"])):
            code, text = _main(["support", "-", "--ptx-isa", version, *extra], opcodes)
            (vdir / name).write_text(f"exit {code}\n{text}")
        code, text = _main(["lint", "--ptx-isa", version, "--json", *lint_paths])
        (vdir / "lint.json").write_text(f"exit {code}\n{text}")
        i = every.index(version)
        if i > 0:
            code, text = _main(["diff", "--ptx-isa", every[i - 1], version,
                                "--format", "json", *base])
            (vdir / "diff.json").write_text(f"exit {code}\n{text}")
        print(f"{version}: {time.process_time() - start:.1f} s CPU", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder to write (new)")
    ap.add_argument("--spec", type=Path, default=ROOT / "spec")
    ap.add_argument("--versions", default=None,
                    help="comma-separated PTX ISA versions (default: every one)")
    ap.add_argument("--consumers", default=None,
                    help="comma-separated versions whose support, lint and diff are written "
                         "too (default: every one; the others: generate only)")
    ap.add_argument("--ptx", type=Path, default=None,
                    help="a folder of .ptx files for lint (default: compile the examples)")
    ap.add_argument("--ptx-only", action="store_true",
                    help="only compile the examples' PTX into --out (for --ptx)")
    args = ap.parse_args()
    if args.ptx_only:
        _example_ptx(args.out)
        return
    if args.out.exists() and any(args.out.iterdir()):
        sys.exit(f"{args.out}: exists and is not empty")
    write_views(args.spec.resolve(), args.out,
                args.versions.split(",") if args.versions else None, args.ptx,
                args.consumers.split(",") if args.consumers else None)


if __name__ == "__main__":
    main()
