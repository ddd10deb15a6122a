"""Assemble instruction forms with ptxas and compare with the spec's support matrix.

Adapted from the ptxas research probe (/tmp/ptxas_research/probe.py, our own
code). Every form becomes one ``.entry`` kernel holding that one instruction;
many kernels share one module, one ptxas run. ``line N; error`` messages are
mapped back to the kernel whose line range holds N. ptxas reports gating
errors (version, target) without stopping, so one run over the forms a pair
does not support must flag every kernel; the forms it does support must
assemble cleanly. Syntax errors are fatal and stop ptxas, so a run with
errors is repeated without the flagged kernels until it is clean.

The matrix check, per (target, PTX ISA version) of the spec:
* verify-only runs (``ptxas -arch=compute_XX``, which checks the PTX of
  ``.target sm_XX`` without generating code; its errors are the same as with
  ``-arch=sm_XX`` apart from the architecture name) of the forms the spec
  says are supported (must be clean) and of the rest (each must be refused
  for a gating reason: a version, a target or an architecture);
* one full assembly with code generation (``-arch=sm_XX``) per target, at the
  newest version, of every form supported there;
* near misses (valid forms with one qualifier or operand changed so that the
  spec calls them invalid) must be refused on every target at the newest
  version.
``.target sm_101X`` has no ``-arch=sm_101X``; it is assembled with the
target's ``ptxas_arch`` (sm_110X), as the spec's targets record.
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ptxgen import instructions as engine
from ptxgen.instructions import Form, Instruction, InstructionSet

LINE_RE = re.compile(r"^ptxas \S+, line (\d+); (error|warning|fatal)\s*: (.*)$")
GATING = ("requires PTX ISA .version", "not supported on .target", "requires .target sm_",
          "cannot be compiled for architecture", "not supported on target")


def ptxas() -> str | None:
    return shutil.which("ptxas")


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


def run_ptxas(text: str, arch: str) -> tuple[int, str]:
    exe = ptxas()
    if exe is None:
        raise FileNotFoundError("ptxas is not on PATH")
    fd, path = tempfile.mkstemp(suffix=".ptx")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        proc = subprocess.run([exe, f"-arch={arch}", "-o", os.devnull, path],
                              capture_output=True, text=True, check=False)
        return proc.returncode, (proc.stdout + proc.stderr).replace(path, "FILE")
    finally:
        os.unlink(path)


def assemble(target: str, version: str, arch: str,
             kernels: Sequence[Kernel]) -> dict[str, list[str]]:
    """{kernel key: ptxas errors}; an empty list means the kernel assembled in a clean run."""
    result: dict[str, list[str]] = {}
    pending = list(kernels)
    while pending:
        text, ranges = module(target, version, pending)
        starts = [s for s, _, _ in ranges]
        rc, out = run_ptxas(text, arch)
        if rc == 0:
            result.update({k.key: [] for k in pending})
            break
        errors: dict[str, list[str]] = {}
        loose: list[str] = []
        for line in out.splitlines():
            m = LINE_RE.match(line.strip())
            if not m:
                if line.strip() and "Ptx assembly aborted" not in line:
                    loose.append(line.strip())
                continue
            if m.group(2) == "warning":
                continue
            lno = int(m.group(1))
            i = bisect.bisect_right(starts, lno) - 1
            owner = ranges[i][2] if i >= 0 and lno <= ranges[i][1] else None
            if owner is None:
                loose.append(line.strip())
            elif m.group(3).strip() not in errors.setdefault(owner, []):
                errors[owner].append(m.group(3).strip())
        if errors:
            result.update(errors)
            pending = [k for k in pending if k.key not in errors]
            continue
        if len(pending) == 1:  # an error without a line: it is this kernel's
            result[pending[0].key] = loose or [f"ptxas exit status {rc}"]
            break
        half = len(pending) // 2  # bisect errors that name no line
        result.update(assemble(target, version, arch, pending[:half]))
        result.update(assemble(target, version, arch, pending[half:]))
        break
    return result


def verify_arch(arch: str) -> str:
    """``-arch`` that checks the PTX without generating code (sm_100a -> compute_100a)."""
    return "compute_" + arch[len("sm_"):]


# ---------------------------------------------------------------------------
# the matrix
# ---------------------------------------------------------------------------

@dataclass
class Report:
    """Disagreements between the spec and ptxas, per check."""

    mismatches: dict[str, list[str]] = field(default_factory=dict)
    runs: int = 0
    kernels: int = 0
    seconds: float = 0.0
    near_misses: int = 0
    rules_probed: set[str] = field(default_factory=set)

    def add(self, check: str, problems: Iterable[str]) -> None:
        self.mismatches.setdefault(check, []).extend(problems)


def _forms(iset: InstructionSet) -> list[Form]:
    return [f for ins in iset.instructions for f in ins.forms]


def _check_supported(target: str, version: str, arch: str, kernels: list[Kernel]) -> list[str]:
    if not kernels:
        return []
    got = assemble(target, version, arch, kernels)
    return [f"{k}: the spec says supported, ptxas refuses: {' | '.join(e)}"
            for k, e in got.items() if e]


def _check_refused(target: str, version: str, arch: str, kernels: list[Kernel],
                   gating_only: bool = True) -> list[str]:
    if not kernels:
        return []
    got = assemble(target, version, arch, kernels)
    out = []
    for k, errs in got.items():
        if not errs:
            out.append(f"{k}: the spec says not supported, ptxas accepts it")
        elif gating_only and not any(g in e for e in errs for g in GATING):
            out.append(f"{k}: refused, but not for a version or target reason: "
                       + " | ".join(errs))
    return out


def near_misses(ins: Instruction, per_form: int = 1, stride: int = 7,
                per_problem: int = 2) -> list[tuple[str, Kernel, tuple[str, ...]]]:
    """Invalid forms one change away from valid ones: (key, kernel, the spec's reasons).

    Each is a sampled valid form with one qualifier or operand choice set to
    another value that the spec's rules refuse; its operands are laid out
    for the changed form where the spec defines that, else as for the valid
    form. At most ``per_problem`` probes per distinct set of reasons.
    """
    out: list[tuple[str, Kernel, tuple[str, ...]]] = []
    seen: dict[tuple[str, ...], int] = {}
    for form in ins.forms[::stride]:
        for name, domain in ins.params:
            for value in domain:
                if value == form.params[name]:
                    continue
                params = {**form.params, name: value}
                problems = tuple(ins.violations(params))
                if not problems or seen.get(problems, 0) >= per_problem:
                    continue
                if _ptxas_lenient(ins, params, problems) or _ambiguous(ins, form, name, value):
                    continue
                try:
                    uses = ins.operand_uses(params, None)
                    if any(u.kind == "vector" and not u.count for u in uses):
                        raise ValueError
                except (KeyError, ValueError, TypeError):
                    uses = form.operands
                args, decls = engine.sample_operands(uses)
                text = engine.render_text(ins, params, uses, args)
                key = f"{text.split(' ', 1)[0].rstrip(';')} <- {form.key}"
                seen[problems] = seen.get(problems, 0) + 1
                out.append((key, Kernel(key, (*decls, text)), problems))
    return out


def _ambiguous(ins: Instruction, form: Form, name: str, value: str) -> bool:
    """Adding an immediate that ptxas may read as another optional operand of the form.

    tcgen05.mma.ws takes its zero-column mask as a register or an immediate, so
    ``..., enable_input_d, 3`` is a valid .ws form, not a misplaced
    scale-input-d.
    """
    op = next((o for o in ins.operands if o.name == name), None)
    if op is None or op.kind != "immediate" or value != engine.TRUE:
        return False
    return any(o.optional and o.name != name and o.when(form.params) for o in ins.operands)


def _ptxas_lenient(ins: Instruction, params: dict[str, str], problems: tuple[str, ...]) -> bool:
    """Violations of seed rules that ptxas 13.0 accepts anyway (recorded in the spec)."""
    for rule in ins.rules:
        if rule.message in problems and rule.ptxas_accepts is not None \
                and rule.ptxas_accepts(params) and len(problems) == 1:
            return True
    return False


def run_matrix(iset: InstructionSet, jobs: int | None = None,
               full_codegen: bool = False) -> Report:
    """Check every (target, version) of the spec against ptxas; see the module doc."""
    start = time.perf_counter()
    report = Report()
    targets = iset.targets
    forms = _forms(iset)
    kernels = {f.key: kernel_for(f) for f in forms}
    tasks: list[tuple[int, str, object, tuple[object, ...]]] = []
    for target, version in targets.pairs():
        t = targets.get(target)
        ok = [kernels[f.key] for f in forms if f.support.supported(targets, target, version)]
        bad = [kernels[f.key] for f in forms
               if not f.support.supported(targets, target, version)]
        pair = f"{target}@{version}"
        codegen = full_codegen or version == targets.newest or (
            t.until is not None and version == max(
                (v for v in targets.versions if t.exists_at(v)), key=engine.vkey))
        arch = t.ptxas_arch if codegen else verify_arch(t.ptxas_arch)
        tasks.append((len(ok) * (10 if codegen else 1), pair, _check_supported,
                      (target, version, arch, ok)))
        tasks.append((len(bad) // 4, pair, _check_refused,
                      (target, version, verify_arch(t.ptxas_arch), bad)))
        report.kernels += len(ok) + len(bad)
    probes = []
    for ins in iset.instructions:
        for _key, kernel, problems in near_misses(ins):
            probes.append(kernel)
            report.rules_probed.update(problems)
    report.near_misses = len(probes)
    for t in targets.targets:
        version = max((v for v in targets.versions if t.exists_at(v)), key=engine.vkey)
        tasks.append((len(probes) // 4, f"near misses on {t.name}@{version}", _check_refused,
                      (t.name, version, verify_arch(t.ptxas_arch), probes, False)))
    for t in targets.targets:  # renamed targets: ptxas still accepts the old name
        if t.until is None:
            continue
        renamed = targets.get(t.renamed_to or "")
        ok = [kernels[f.key] for f in forms
              if f.support.supported(targets, renamed.name, t.until)]
        tasks.append((len(ok), f"{t.name}@{t.until} (renamed)", _check_supported,
                      (t.name, t.until, verify_arch(t.ptxas_arch), ok)))
    tasks.sort(key=lambda x: -x[0])
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        futures = [(check, pool.submit(fn, *args)) for _, check, fn, args in tasks]
        for check, fut in futures:
            report.add(check, fut.result())
            report.runs += 1
    report.seconds = time.perf_counter() - start
    return report
