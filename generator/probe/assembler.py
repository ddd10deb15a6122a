"""One ptxas binary: what it is, and assembling instruction forms with it.

Every form becomes one ``.entry`` kernel holding that one instruction; many
kernels share one module, one ptxas run. ``line N; error`` messages are mapped
back to the kernel whose line range holds N. ptxas reports gating errors
(version, target) without stopping, so one run flags every kernel it refuses;
syntax errors are fatal and stop it, so a run with errors is repeated without
the flagged kernels until it is clean: from the kernel after the fatal one (the
kernels before it were parsed; they are assembled together once at the end), so
that a module with many unknown syntaxes is not parsed again from its start for
each.

ptxas has one grammar for every target and version: a kernel it cannot parse
(a fatal syntax error, e.g. ptxas 13.0 and ``.sp::2:4``) is refused with the
same errors everywhere, so, once seen, it is not assembled again (each would cost
a run of its own) for another target, version or -arch of that assembler in this
process.

Results are cached per kernel: (assembler, .target, .version, -arch, kernel
text) -> ptxas's errors, in memory for the process (the conformance tests and
``ptxgen probe`` share their assemblies) and, when the environment variable
``PTXGEN_PROBE_CACHE`` names a folder, on disk (one JSON file per assembler,
target, version and -arch).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ptxgen.model import instructions as engine
from ptxgen.model.instructions import Form

LINE_RE = re.compile(r"^ptxas \S+(?: \S+)*, line (\d+); (error|warning|fatal|info)\s*: (.*)$")
GATING = ("requires PTX ISA .version", "not supported on .target", "requires .target sm_",
          "cannot be compiled for architecture", "not supported on target",
          "does not support .target", "', for arch 'sm_",
          # ptxas 13.x's refusal of the sink _ before PTX ISA 7.1 (mbarrier.arrive)
          "Result discard mode is not allowed")
_RELEASE = re.compile(r"release (\d+\.\d+), (V[\d.]+)")
_CURRENT = re.compile(r"current version is '(\d+\.\d+)'")
_GPU_NAMES = re.compile(r"'(sm_\d+[af]?)'")


class AssemblerError(RuntimeError):
    """The assembler cannot be run or does not say what it is (exit status 2)."""


@dataclass(frozen=True)
class Kernel:
    key: str
    lines: tuple[str, ...]  # declarations and the instruction


def kernel_for(form: Form) -> Kernel:
    args, decls = engine.sample(form)
    text = engine.build(form.instruction, args)
    return Kernel(form.key, (*decls, text))


def module(target: str, version: str, kernels: Sequence[Kernel]
           ) -> tuple[str, list[tuple[int, int, str]]]:
    lines = [f".version {version}", f".target {target}", ".address_size 64", ""]
    ranges = []
    for i, k in enumerate(kernels):
        start = len(lines) + 1
        lines += [f".entry k{i}()", "{", *k.lines, "ret;", "}"]
        ranges.append((start, len(lines), k.key))
    return "\n".join(lines) + "\n", ranges


def verify_arch(arch: str) -> str:
    """``-arch`` that checks the PTX without generating code (sm_100a -> compute_100a)."""
    return "compute_" + arch[len("sm_"):]


_memory: dict[str, dict[str, list[str]]] = {}
_lock = threading.Lock()
#: (assembler, kernel) -> errors, for kernels the assembler cannot parse; see the module doc.
_unparsable: dict[tuple[str, str], list[str]] = {}
_SYNTAX = re.compile(r"^Parsing error near .*: syntax error$")


@dataclass(frozen=True)
class Assembler:
    """A ptxas binary: its path, CUDA release, newest PTX ISA and GPU names."""

    path: str
    release: str  # "13.5"
    build: str  # "V13.5.37"
    newest: str  # the newest PTX ISA version it accepts, "9.5"
    gpu_names: tuple[str, ...]  # the sm_* values of --gpu-name

    @staticmethod
    def open(path: str | os.PathLike[str]) -> Assembler:
        exe = str(path)
        try:
            ver = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 check=False, timeout=60)
            helptext = subprocess.run([exe, "--help"], capture_output=True, text=True,
                                      check=False, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise AssemblerError(f"--ptxas: cannot run {exe}: {exc}") from None
        m = _RELEASE.search(ver.stdout + ver.stderr)
        if ver.returncode != 0 or m is None or "ptxas" not in (ver.stdout + ver.stderr):
            raise AssemblerError(f"--ptxas: {exe} is not ptxas (its --version does not name a "
                                 "CUDA release)")
        text = helptext.stdout
        start = text.find("--gpu-name")
        names = _GPU_NAMES.findall(text[start:text.find("Default value", start)])
        gpus = tuple(dict.fromkeys(names))
        probe = (".version 99.9\n.target sm_75\n.address_size 64\n"
                 ".entry k()\n{\nret;\n}\n")
        _, out = _run(exe, probe, "compute_75")
        cur = _CURRENT.search(out)
        if cur is None:
            raise AssemblerError(f"--ptxas: {exe} does not say which PTX ISA version it "
                                 f"writes: {out.strip()[:200]}")
        return Assembler(exe, m.group(1), m.group(2), cur.group(1), gpus)

    @functools.cached_property
    def identity(self) -> str:
        """The build and real path: the key of its cached results. Made once (the matrix
        asked for it per kernel, ~2 million realpath calls: half its time on 2 cores)."""
        return f"{self.build}:{os.path.realpath(self.path)}"

    def run(self, text: str, arch: str) -> tuple[int, str]:
        return _run(self.path, text, arch)

    def knows(self, version: str) -> bool:
        return engine.vkey(version) <= engine.vkey(self.newest)

    def assemble(self, target: str, version: str, arch: str,
                 kernels: Sequence[Kernel]) -> dict[str, list[str]]:
        """{kernel key: ptxas errors}; an empty list: the kernel assembled in a clean run."""
        identity = self.identity
        bucket_key = hashlib.sha256("\0".join((identity, target, version, arch))
                                    .encode()).hexdigest()
        bucket = _bucket(bucket_key)
        out: dict[str, list[str]] = {}
        todo: list[Kernel] = []
        hashes: dict[str, str] = {}
        inferred = False
        for k in kernels:
            h = hashlib.sha256("\n".join(k.lines).encode()).hexdigest()[:32]
            hashes[k.key] = h
            with _lock:
                hit = bucket.get(h)
                if hit is None:
                    hit = _unparsable.get((identity, h))
                    if hit is not None:
                        bucket[h] = hit
                        inferred = True
            if hit is None:
                todo.append(k)
            else:
                out[k.key] = hit
        if inferred and not todo:
            _save(bucket_key, bucket)
        if todo:
            got = self._assemble(target, version, arch, todo)
            with _lock:
                for k in todo:
                    errs = got.get(k.key, [])
                    out[k.key] = errs
                    bucket[hashes[k.key]] = errs
                    if any(_SYNTAX.search(e) for e in errs):
                        _unparsable[(identity, hashes[k.key])] = errs
            _save(bucket_key, bucket)
        return out

    def _assemble(self, target: str, version: str, arch: str,
                  kernels: Sequence[Kernel]) -> dict[str, list[str]]:
        result: dict[str, list[str]] = {}
        pending = list(kernels)
        parsed: list[Kernel] = []  # before a fatal error and without errors: confirmed below
        while pending:
            text, ranges = module(target, version, pending)
            starts = [s for s, _, _ in ranges]
            rc, out = self.run(text, arch)
            if rc == 0:
                result.update({k.key: [] for k in pending})
                break
            errors: dict[str, list[str]] = {}
            loose: list[str] = []
            fatal: int | None = None  # the kernel whose syntax error stopped the parser
            for line in out.splitlines():
                m = LINE_RE.match(line.strip())
                if not m:
                    if line.strip() and "Ptx assembly aborted" not in line:
                        loose.append(line.strip())
                    continue
                if m.group(2) in ("warning", "info"):
                    continue
                lno = int(m.group(1))
                i = bisect.bisect_right(starts, lno) - 1
                owner = ranges[i][2] if i >= 0 and lno <= ranges[i][1] else None
                if _INTERNAL.search(m.group(3)):  # in code ptxas adds (an emulation's
                    owner = None                   # '_warpsync', '__cuda_sm_8x_...'): bisect
                if owner is None:
                    loose.append(line.strip())
                    continue
                if m.group(2) == "fatal" and fatal is None:
                    fatal = i
                if m.group(3).strip() not in errors.setdefault(owner, []):
                    errors[owner].append(m.group(3).strip())
            if errors:
                result.update(errors)
                if fatal is not None and not loose:
                    # ptxas parsed the kernels before the fatal one and stopped there: they
                    # need no second pass through the parser now, only one run together at
                    # the end (which shows any error of a later stage); the rest goes on.
                    parsed += [k for k in pending[:fatal] if k.key not in errors]
                    pending = pending[fatal + 1:]
                pending = [k for k in pending if k.key not in errors]
                continue
            if len(pending) == 1:  # an error without a line: it is this kernel's
                result[pending[0].key] = loose or [f"ptxas exit status {rc}"]
                break
            half = len(pending) // 2  # bisect errors that name no kernel
            result.update(self._assemble(target, version, arch, pending[:half]))
            result.update(self._assemble(target, version, arch, pending[half:]))
            break
        if parsed:
            result.update(self._assemble(target, version, arch, parsed))
        return result


#: An error about a name of ptxas's own (a quoted identifier starting with '_'), whose line
#: number does not point into the kernel that caused it.
_INTERNAL = re.compile(r"'_[A-Za-z_]")


def _run(exe: str, text: str, arch: str) -> tuple[int, str]:
    fd, path = tempfile.mkstemp(suffix=".ptx")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        proc = subprocess.run([exe, f"-arch={arch}", "-o", os.devnull, path],
                              capture_output=True, text=True, check=False)
        return proc.returncode, (proc.stdout + proc.stderr).replace(path, "FILE")
    except OSError as exc:
        raise AssemblerError(f"cannot run {exe}: {exc}") from None
    finally:
        os.unlink(path)


def _disk() -> Path | None:
    where = os.environ.get("PTXGEN_PROBE_CACHE")
    return Path(where) if where else None


def _bucket(key: str) -> dict[str, list[str]]:
    """The cached results of one (assembler, target, version, -arch): {kernel: errors}."""
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            return hit
    loaded: dict[str, list[str]] = {}
    d = _disk()
    if d is not None:
        try:
            loaded = json.loads((d / f"{key}.json").read_text())
        except (OSError, ValueError):
            loaded = {}
    with _lock:
        return _memory.setdefault(key, loaded)


def _save(key: str, bucket: dict[str, list[str]]) -> None:
    d = _disk()
    if d is None:
        return
    d.mkdir(parents=True, exist_ok=True)
    with _lock:
        text = json.dumps(bucket, sort_keys=True)
    tmp = d / f".{key}.{os.getpid()}.{threading.get_ident()}"
    tmp.write_text(text)
    os.replace(tmp, d / f"{key}.json")


def is_gating(errors: Sequence[str]) -> bool:
    return any(g in e for e in errors for g in GATING)


__all__ = ["GATING", "Assembler", "AssemblerError", "Kernel", "is_gating", "kernel_for",
           "module", "verify_arch"]
