"""Build and compile CUDA translation units that call the generated PTX wrappers.

Each form becomes one ``extern "C" __global__`` kernel that calls its
wrapper with operands taken from kernel parameters (vectors filled from one
scalar parameter, immediates as ``imm<V>`` / ``imms<...>`` with the first
allowed value); the wrappers' asm is volatile, so nvcc keeps the call. The
PTX nvcc writes is split per kernel to check the instruction text (or, on a
target without the form, the call of the ``ptxgen_unsupported_target_...``
function).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ptxgen.model.instructions import first_allowed

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "generated" / "include"
NS = "ptxgen::ptx"


def nvcc() -> str | None:
    return shutil.which("nvcc")


def kernel(name: str, call: Mapping[str, Any]) -> str:
    params: list[str] = []
    pre: list[str] = []
    args: list[str] = []
    for op in call["operands"]:
        n, kind, t, c = op["name"], op["kind"], op["ctype"], op["count"]
        if kind == "returned":  # the wrapper returns it; the asm is volatile
            continue
        if kind in ("register", "address", "predicate"):
            params.append(f"{t} {n}")
            args.append(n)
        elif kind == "tensor":  # a tensor map and its coordinates
            params += [f"const void* {n}_map", f"{t} {n}_init"]
            pre.append(f"{t} {n}[{c}]; for (int i = 0; i < {c}; ++i) {n}[i] = {n}_init;")
            args += [f"{n}_map", n]
        elif kind == "vector":
            # Filled from one scalar; the asm is volatile, so it stays although the
            # outputs are not stored (which keeps the kernels small).
            params.append(f"{t} {n}_init")
            pre.append(f"{t} {n}[{c}]; for (int i = 0; i < {c}; ++i) {n}[i] = {n}_init;")
            args.append(n)
        elif kind == "immediate":
            args.append(f"{NS}::imm<{first_allowed(op['values'])}>")
        else:
            vals = ", ".join(str(first_allowed(v)) for v in op["elements"])
            args.append(f"{NS}::imms<{vals}>")
    targs = ", ".join(call["template_args"])
    fn = f"{call['function']}<{targs}>" if targs else call["function"]
    body = [*pre, f"{fn}({', '.join(args)});"]
    return (f"extern \"C\" __global__ void {name}({', '.join(params)}) {{\n    "
            + "\n    ".join(body) + "\n}\n")


def translation_unit(calls: Sequence[tuple[str, Mapping[str, Any]]],
                     header: str = "ptxgen/ptx.hpp") -> str:
    parts = [f"#include \"{header}\"\n"]
    parts += [kernel(name, call) for name, call in calls]
    return "\n".join(parts)


def snapshot_include(dst: Path) -> Path:
    """A private copy of generated/include, so a concurrent ``ptxgen generate``
    (which swaps generated/ as a whole) cannot pull headers from under a build."""
    out = dst / "include"
    if not out.exists():
        shutil.copytree(INCLUDE, out)
    return out


def compile_tu(source: str, arch: str, workdir: Path, mode: str = "c",
               extra: Iterable[str] = (), include: Path | None = None,
               exe: str | None = None) -> tuple[int, str, dict[str, str]]:
    """Compile with nvcc; returns (exit status, output, {kernel: PTX}) of the
    architecture-specific pass (for -arch=sm_100a: compute_100a).

    ``mode`` "c" is a whole build (-c: host code, nvcc's generic compute_XX PTX
    pass for a / f targets, the target's pass and ptxas); "fatbin" the same device
    passes without the host compilation; "cubin" only the device code of the target
    itself (faster); "ptx" stops before ptxas.
    """
    exe = exe or nvcc()
    if exe is None:
        raise FileNotFoundError("nvcc is not on PATH")
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "tu.cu"
    src.write_text(source)
    keep = workdir / "keep"
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir()
    cmd = [exe, "-std=c++17", f"-arch={arch}", f"-I{include or INCLUDE}", "--keep",
           f"--keep-dir={keep}", *extra]
    cmd += {"c": ["-c", "-o", str(workdir / "tu.o")],
            "fatbin": ["-fatbin", "-o", str(workdir / "tu.fatbin")],
            "cubin": ["-cubin", "-o", str(workdir / "tu.cubin")],
            "ptx": ["-ptx", "-o", str(workdir / "tu.ptx")]}[mode]
    proc = subprocess.run([*cmd, str(src)], capture_output=True, text=True, check=False,
                          cwd=workdir)
    want = "compute_" + arch[len("sm_"):]
    ptx_files = [p for p in keep.glob("*.ptx") if p.name.endswith(f".{want}.ptx")]
    if not ptx_files:  # a baseline target: a single pass, tu.ptx
        ptx_files = [p for p in (keep / "tu.ptx", workdir / "tu.ptx") if p.exists()]
    kernels = split_ptx(ptx_files[0].read_text()) if ptx_files else {}
    return proc.returncode, proc.stdout + proc.stderr, kernels


def kernel_body(source: str, arch: str, workdir: Path, exe: str, include: Path,
                kernel: str = "k") -> list[str]:
    """The instruction lines of ``kernel`` of ``source`` built by nvcc ``exe`` for ``arch``
    (its own pass, "cubin" mode) against ``include``; the build must succeed."""
    rc, out, kernels = compile_tu(source, arch, workdir, "cubin", include=include, exe=exe)
    assert rc == 0, out
    return instructions_in(kernels[kernel])


def sm107_lines(source: str, workdir: Path, prefixes: tuple[str, ...], nvcc: str,
                include: Path) -> list[str]:
    """The instruction lines starting with ``prefixes`` of kernel ``k`` of ``source``,
    built for sm_107a by nvcc ``nvcc`` (13.5) against ``include``, with register numbers
    dropped (``%rd12`` -> ``%rd``)."""
    return [re.sub(r"%(r|rd|rs)\d+", r"%\1", ln)
            for ln in kernel_body(source, "sm_107a", workdir / "135", nvcc, include)
            if ln.startswith(prefixes)]


_ENTRY = re.compile(r"^\.visible \.entry (\w+)\(", re.M)


def split_ptx(ptx: str) -> dict[str, str]:
    """{kernel name: its PTX text}."""
    starts = [(m.start(), m.group(1)) for m in _ENTRY.finditer(ptx)]
    out = {}
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(ptx)
        out[name] = ptx[pos:end]
    return out


def instructions_in(ptx: str) -> list[str]:
    """The instruction lines of one kernel, whitespace-normalised, register names kept."""
    body = ptx[ptx.find("{"):]
    out = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith(("//", ".reg", "{", "}", "$", ".loc", ".file")):
            continue
        out.append(" ".join(line.split()))
    return out


def asm_instructions_in(ptx: str) -> list[str]:
    """The instruction lines of one kernel that its inline asm statements wrote (between nvcc's
    ``// begin inline asm`` and ``// end inline asm``), whitespace-normalised: what the
    wrappers emit, without the compiler's own code around them (nvcc packs a ``.b128``
    operand with ``mov.b128 %rq, {%rd, %rd}`` before the asm and unpacks it after)."""
    out: list[str] = []
    inside = False
    for line in ptx[ptx.find("{"):].splitlines():
        line = line.strip()
        if line == "// begin inline asm":
            inside = True
        elif line == "// end inline asm":
            inside = False
        elif inside:
            out += instructions_in("{\n" + line)
    return out


def jobs() -> int:
    return max(1, os.cpu_count() or 1)
