"""The conformance matrix: one ptxas against the spec's support matrix.

Per (target, PTX ISA version) of the spec that the assembler knows:

* verify-only runs (``ptxas -arch=compute_XX``, which checks the PTX of
  ``.target sm_XX`` without generating code; its errors are the same as with
  ``-arch=sm_XX`` apart from the architecture name) of every valid form: the
  forms the spec supports there must assemble, the others must be refused for
  a gating reason (a version, a target or an architecture);
* with ``covering``, CI's choice, only each instruction's covering array of valid forms
  (probe/covering.py's :class:`Plan`): its value forms (every value, every support) on
  every pair, the rest of the array (every pair of values) at the newest version of the
  first target that has each form;
* one full assembly with code generation (``-arch=sm_XX``) per target, at the
  newest version, of every form supported there (``covering``: of the forms whose home
  target it is, each checked form once);
* near misses (valid forms with one qualifier or operand changed so that the
  spec calls them invalid) must be refused on every target at the newest
  version; near misses that break only rules the spec records ptxas as accepting
  (``ptxas_accepts``) must assemble on every target where their own gates allow them;
* forms that exist only from a PTX ISA version newer than the assembler knows
  (a qualifier value added later) must be refused, for any reason (ptxas 13.0
  calls ``.kind::ti16`` an unknown modifier);
* the boundary values of immediates with value gates (the first and last value
  of each gate, and the last value of the operand's own range, in every form the
  gate applies to) are assembled like forms of their own: supported where the form
  and the gate allow, refused (for any reason: ptxas calls a value another target
  lacks out of range) elsewhere; the value after a gate's last one is a near miss.

The checks of one (target, version, -arch) are assembled together, one batch of what must
assemble and one of what must be refused (forms, unknown forms, gated immediates, near
misses), so that a pair costs two ptxas runs, not one per check.

The spec's answer is the ISA's, with the deviations the spec records for the
assembler's CUDA toolkit (``Form.support_for``, ``Targets.for_toolkit``): ptxas
13.0 is checked against what the spec says of toolkit 13.0. An assembler newer
than the spec's toolkits is checked against the ISA rule over the versions both
know. ``.target sm_101X`` has no ``-arch=sm_101X``; it is assembled with the
target's ``ptxas_arch`` (sm_110X), as the spec's targets record.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from ptxgen.model import instructions as engine
from ptxgen.model.instructions import Form, Instruction, InstructionSet, Support
from ptxgen.model.targets import Targets
from ptxgen.probe.assembler import Assembler, Kernel, is_gating, kernel_for, verify_arch
from ptxgen.probe.covering import Plan, plan


@dataclass
class Report:
    """Disagreements between the spec and ptxas, per check."""

    toolkit: str | None = None
    mismatches: dict[str, list[str]] = field(default_factory=dict)
    runs: int = 0
    kernels: int = 0
    seconds: float = 0.0
    near_misses: int = 0
    rules_probed: set[str] = field(default_factory=set)
    # rules whose only probes are lenient near misses that no (target, version) this
    # assembler knows allows (.override::global_address on a prefetch needs PTX ISA 9.4)
    rules_beyond: set[str] = field(default_factory=set)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    forms: int = 0  # the valid forms checked on every pair (all, or the covering arrays)

    def add(self, check: str, problems: Iterable[str]) -> None:
        self.mismatches.setdefault(check, []).extend(problems)


def toolkit_of(targets: Targets, asm: Assembler) -> str | None:
    """The spec's name for the assembler's toolkit, or None if the spec does not list it."""
    return asm.release if asm.release in targets.toolkit_names else None


def checked_targets(targets: Targets, asm: Assembler) -> Targets:
    """The targets as this assembler's toolkit sees them, over the versions it knows."""
    tk = toolkit_of(targets, asm)
    tt = targets.for_toolkit(tk)
    return Targets(tuple(v for v in tt.versions if asm.knows(v)), tt.targets, tt.families,
                   tt.suffix_macros, tt.toolkits)


def pairs_of(targets: Targets, asm: Assembler) -> list[tuple[str, str]]:
    return [(t, v) for t, v in targets.pairs()
            if targets.get(t).ptxas_arch in asm.gpu_names]


def _forms(iset: InstructionSet) -> list[Form]:
    return [f for ins in iset.instructions for f in ins.forms]


#: What a check expects of its kernels: to assemble; to be refused for a gating reason (a
#: version, a target, an architecture); to be refused for any reason.
SUPPORTED, GATED, REFUSED = "supported", "gated", "refused"


def _verdicts(got: dict[str, list[str]], kernels: list[Kernel], expect: str) -> list[str]:
    out = []
    for k in kernels:
        errs = got[k.key]
        if expect == SUPPORTED:
            if errs:
                out.append(f"{k.key}: the spec says supported, ptxas refuses: {' | '.join(errs)}")
        elif not errs:
            out.append(f"{k.key}: the spec says not supported, ptxas accepts it")
        elif expect == GATED and not is_gating(errs):
            out.append(f"{k.key}: refused, but not for a version or target reason: "
                       + " | ".join(errs))
    return out


def _check(asm: Assembler, target: str, version: str, arch: str,
           parts: list[tuple[str, str, list[Kernel]]]) -> list[tuple[str, list[str]]]:
    """Assemble the kernels of several checks of one (target, version, -arch) in one batch
    (one ptxas run where all of them agree with the spec, instead of one per check) and
    judge each check's own: [(check, problems)]."""
    kernels = [k for _c, _e, ks in parts for k in ks]
    got = asm.assemble(target, version, arch, kernels) if kernels else {}
    return [(check, _verdicts(got, ks, expect)) for check, expect, ks in parts]


def _one_change(ins: Instruction, stride: int, per_problem: int, lenient: bool,
                toolkit: str | None = None
                ) -> Iterable[tuple[Form, dict[str, str], tuple[str, ...]]]:
    """Sampled valid forms with one qualifier or operand choice changed so that the spec's
    rules refuse them: (form, the changed params, the reasons). ``lenient``: only those
    that break nothing but rules the ptxas of ``toolkit`` accepts anyway, else only the
    others."""
    seen: dict[tuple[str, ...], int] = {}
    # every form of a small instruction (fence.proxy's sync_restrict rule has 2 of 22)
    for form in (ins.forms if len(ins.forms) <= 64 else ins.forms[::stride]):
        for name, domain in ins.params:
            for value in domain:
                if value == form.params[name]:
                    continue
                params = {**form.params, name: value}
                problems = tuple(ins.violations(params))
                if not problems or seen.get(problems, 0) >= per_problem:
                    continue
                if _ptxas_lenient(ins, params, problems, toolkit) != lenient or \
                        _ambiguous(ins, form, name, value):
                    continue
                seen[problems] = seen.get(problems, 0) + 1
                yield form, params, problems


def near_misses(ins: Instruction, per_form: int = 1, stride: int = 7,
                per_problem: int = 2, toolkit: str | None = None
                ) -> list[tuple[str, Kernel, tuple[str, ...]]]:
    """Invalid forms one change away from valid ones: (key, kernel, the spec's reasons).

    Each is a sampled valid form with one qualifier or operand choice set to
    another value that the spec's rules refuse; its operands are laid out
    for the changed form where the spec defines that, else as for the valid
    form. At most ``per_problem`` probes per distinct set of reasons.
    """
    return [(*near_miss_kernel(ins, form, params), problems)
            for form, params, problems in _one_change(ins, stride, per_problem, False,
                                                      toolkit)]


def lenient_misses(ins: Instruction, toolkit: str | None, stride: int = 7,
                   per_problem: int = 2) -> list[tuple[Kernel, Support, tuple[str, ...]]]:
    """Near misses that break only rules ptxas accepts anyway (``ptxas_accepts``: a
    subset ptxgen chooses to offer, a seed rule ptxas does not apply): (kernel, where
    the changed form's own gates allow it, the rules it breaks). The matrix checks
    that ptxas accepts each where its gates allow it, which is what the spec claims."""
    return [(near_miss_kernel(ins, form, params)[1], ins.support(params, toolkit), problems)
            for form, params, problems in _one_change(ins, stride, per_problem, True,
                                                      toolkit)]


def near_miss_kernel(ins: Instruction, form: Form, params: dict[str, str]) -> tuple[str, Kernel]:
    """The kernel of ``form`` with its qualifiers changed to ``params``."""
    try:
        uses = ins.operand_uses(params, None)
        if any(u.kind == "vector" and not u.count for u in uses):
            raise ValueError
    except (KeyError, ValueError, TypeError):
        uses = form.operands
    args, decls = engine.sample_operands(uses)
    text = engine.render_text(ins, params, uses, args)
    key = f"{text.split(' ', 1)[0].rstrip(';')} <- {form.key}"
    return key, Kernel(key, (*decls, text))


def _ambiguous(ins: Instruction, form: Form, name: str, value: str) -> bool:
    """Adding an immediate that ptxas may read as another optional operand of the form.

    tcgen05.mma.ws takes its zero-column mask as a register or an immediate, so
    ``..., enable_input_d, 3`` is a valid .ws form, not a misplaced
    scale-input-d (whether scale-input-d is added to a .ws form or .ws to a form
    with scale-input-d).
    """
    op = next((o for o in ins.operands if o.name == name), None)
    if op is not None and op.kind == "immediate" and value == engine.TRUE:
        return any(o.optional and o.name != name and o.when(form.params) for o in ins.operands)
    # The reverse: a change (.ws) under which the form's trailing immediate (scale-input-d)
    # is no longer allowed but another optional operand (the zero-column mask) is, which
    # ptxas then reads the immediate as.
    params = {**form.params, name: value}
    for imm in ins.operands:
        if imm.kind != "immediate" or form.params.get(imm.name) != engine.TRUE or \
                imm.when(params):
            continue
        if any(o.optional and o.name != imm.name and o.when(params) and
               not o.when(form.params) for o in ins.operands):
            return True
    return False


def _ptxas_lenient(ins: Instruction, params: dict[str, str], problems: tuple[str, ...],
                   toolkit: str | None = None) -> bool:
    """Violations only of rules that the ptxas of ``toolkit`` accepts anyway (recorded in
    the spec)."""
    lenient = {rule.message for rule in ins.rules if rule.lenient_for(params, toolkit)}
    return bool(problems) and all(p in lenient for p in problems)


def _value_range(values: Any) -> list[int]:
    """The first and last value of a resolved immediate set (one, if they are equal)."""
    vals = sorted(values) if not (isinstance(values, tuple) and values[:1] == ("range",)) \
        else [values[1]]
    return sorted({vals[0], vals[-1]}) if vals else []


def value_gate_kernels(iset: InstructionSet, toolkit: str | None
                       ) -> tuple[list[tuple[Kernel, Any]], list[Kernel]]:
    """The boundary values of gated immediates: ([(kernel, support)], near misses)."""
    checked: list[tuple[Kernel, Any]] = []
    misses: list[Kernel] = []
    for f in _forms(iset):
        ins = f.instruction
        for u in f.operands:
            if u.kind != "immediate" or not u.gated:
                continue
            args, decls = engine.sample(f)
            tests = [(v, True) for v in _value_range(u.values)[-1:]]
            for values, _g in u.gated:
                bounds = _value_range(values)
                tests += [(v, True) for v in bounds]
                beyond = bounds[-1] + 1
                if engine.gated_value(u, beyond) is None and (
                        u.values is None or beyond not in u.values):
                    tests.append((beyond, False))
            # the operand unchecked, so that the near miss can be written too
            uses = tuple(replace(x, values=None) if x.name == u.name else x
                         for x in f.operands)
            for value, valid in tests:
                text = engine.render_text(ins, f.params, uses, {**args, u.name: value})
                kernel = Kernel(f"{text} <- {f.key}", (*decls, text))
                if valid:
                    checked.append((kernel, engine.value_support(ins, f.params, u, value,
                                                                 toolkit)))
                else:
                    misses.append(kernel)
    return checked, misses


def covering_plan(iset: InstructionSet, targets: Targets, toolkit: str | None) -> Plan:
    """CI's plan (probe/covering.py) over ``targets`` (the toolkit's view) for the toolkit's
    support; the renamed targets are no form's home."""
    names = [t.name for t in targets.targets if t.until is None]
    newest = targets.newest
    return plan(iset.instructions, names,
                lambda f, t: f.support_for(toolkit).supported(targets, t, newest))


def run_matrix(iset: InstructionSet, asm: Assembler, jobs: int | None = None,
               full_codegen: bool = False, covering: bool = False) -> Report:
    """Check every (target, version) of the spec that ``asm`` knows; see the module doc.
    ``covering``: only each instruction's covering array of forms (probe/covering.py: every
    value and every pair of values of its parameters, every distinct support) instead of
    every valid form, on every pair; near misses and gated immediates are the same."""
    start = time.perf_counter()
    tk = toolkit_of(iset.targets, asm)
    targets = checked_targets(iset.targets, asm)
    report = Report(toolkit=tk)
    newest = targets.newest
    chosen = covering_plan(iset, targets, tk) if covering else None
    forms = chosen.forms if chosen else _forms(iset)
    report.forms = len(forms)
    kernels = {f.key: kernel_for(f) for f in forms}
    support = {f.key: f.support_for(tk) for f in forms}
    # (target, version, -arch, whether they must assemble) -> [(check, expectation,
    # kernels)]: checks that share ptxas runs (a batch that must assemble is one clean
    # run; one that must be refused, one run that flags each kernel)
    batches: dict[tuple[str, str, str, bool], list[tuple[str, str, list[Kernel]]]] = {}
    weights: dict[tuple[str, str, str, bool], int] = {}

    def task(weight: int, target: str, version: str, arch: str, check: str, expect: str,
             ks: list[Kernel]) -> None:
        key = (target, version, arch, expect == SUPPORTED)
        batches.setdefault(key, []).append((check, expect, ks))
        weights[key] = weights.get(key, 0) + weight

    # Forms that exist only from a PTX ISA version newer than the assembler's (a qualifier
    # value it has never heard of, such as .kind::ti16 for ptxas 13.0): it refuses them
    # as unknown, which is the only answer it can give; they must be refused, for any
    # reason.
    later = {f.key for f in forms
             if all(engine.vkey(v) > engine.vkey(asm.newest)
                    for v in support[f.key].matrix(iset.targets).values())}
    gated, gated_misses = value_gate_kernels(iset, tk)
    for target, version in pairs_of(targets, asm):
        t = targets.get(target)
        here = chosen.at(target, version, newest) if chosen else forms
        ok_forms = [f for f in here if support[f.key].supported(targets, target, version)]
        refused = [f for f in here if f.key not in later
                   and not support[f.key].supported(targets, target, version)]
        # A form that the spec has on another target at this version is refused here for
        # the target, whatever ptxas's words (13.5 calls .collector::b::use of tcgen05.mma
        # an "Illegal modifier" on sm_100a and assembles it on sm_107a): any refusal will do.
        elsewhere = {f.key for f in refused if any(
            support[f.key].supported(targets, other, version) for other in support[f.key].targets
            if other != target and other in targets.by_name)}
        bad = [kernels[f.key] for f in refused if f.key not in elsewhere]
        bad_elsewhere = [kernels[f.key] for f in refused if f.key in elsewhere]
        unknown = [kernels[f.key] for f in here if f.key in later]
        pair = f"{target}@{version}"
        report.pairs.append((target, version))
        codegen = full_codegen or version == newest or (
            t.until is not None and version == max(
                (v for v in targets.versions if t.exists_at(v)), key=engine.vkey))
        verify = verify_arch(t.ptxas_arch)
        if codegen and chosen and not full_codegen:  # each checked form once, at its home
            gen = [kernels[f.key] for f in ok_forms if chosen.home[f.key] == target]
            if gen:
                task(len(gen) * 10, target, version, t.ptxas_arch, pair, SUPPORTED, gen)
            ok = [kernels[f.key] for f in ok_forms if chosen.home[f.key] != target]
            codegen = False
        else:
            ok = [kernels[f.key] for f in ok_forms]
        arch = t.ptxas_arch if codegen else verify
        task(len(ok) * (10 if codegen else 1), target, version, arch, pair, SUPPORTED, ok)
        task(len(bad) // 4, target, version, verify, pair, GATED, bad)
        if bad_elsewhere:
            task(len(bad_elsewhere) // 4, target, version, verify, pair + " (other targets')",
                 REFUSED, bad_elsewhere)
        if unknown:
            task(len(unknown) // 4, target, version, verify, pair, REFUSED, unknown)
        # gated immediates: another target calls the value out of range (not a gating
        # message), so a refusal for any reason is the right one
        g_ok = [k for k, sup in gated if sup.supported(targets, target, version)]
        g_bad = [k for k, sup in gated if not sup.supported(targets, target, version)]
        if g_ok:
            task(len(g_ok), target, version, verify, pair + " (gated immediates)", SUPPORTED,
                 g_ok)
        if g_bad:
            task(len(g_bad) // 4, target, version, verify, pair + " (gated immediates)",
                 REFUSED, g_bad)
        report.kernels += len(ok_forms) + len(refused) + len(unknown) + len(g_ok) + len(g_bad)
    probes = []
    for ins in iset.instructions:
        for _key, kernel, problems in near_misses(ins, toolkit=tk):
            probes.append(kernel)
            report.rules_probed.update(problems)
    probes += gated_misses
    report.near_misses = len(probes)
    lenient = [m for ins in iset.instructions for m in lenient_misses(ins, tk)]
    known = pairs_of(targets, asm)
    for _k, sup, problems in lenient:
        if not any(sup.supported(targets, t, v) for t, v in known):
            report.rules_beyond.update(problems)
    for t in targets.targets:
        if t.ptxas_arch not in asm.gpu_names:
            continue
        exists = [v for v in targets.versions if t.exists_at(v)]
        if not exists:
            continue
        version = max(exists, key=engine.vkey)
        task(len(probes) // 4, t.name, version, verify_arch(t.ptxas_arch),
             f"near misses on {t.name}@{version}", REFUSED, probes)
        # what the spec refuses but records ptxas as accepting must assemble where the
        # changed form's own gates allow it
        accepted = [(k, problems) for k, sup, problems in lenient
                    if sup.supported(targets, t.name, version)]
        if accepted:
            for _k, problems in accepted:
                report.rules_probed.update(problems)
            report.kernels += len(accepted)
            task(len(accepted), t.name, version, verify_arch(t.ptxas_arch),
                 f"lenient near misses on {t.name}@{version}", SUPPORTED,
                 [k for k, _p in accepted])
    for t in targets.targets:  # renamed targets: ptxas still accepts the old name
        if t.until is None or t.until not in targets.versions:
            continue
        renamed = targets.get(t.renamed_to or "")
        ok = [kernels[f.key] for f in (chosen.at(renamed.name, t.until, newest) if chosen
                                       else forms)
              if support[f.key].supported(targets, renamed.name, t.until)]
        task(len(ok), t.name, t.until, verify_arch(t.ptxas_arch),
             f"{t.name}@{t.until} (renamed)", SUPPORTED, ok)
    order = sorted(batches, key=lambda b: -weights[b])
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        futures = [pool.submit(_check, asm, *b[:3], batches[b]) for b in order]
        for fut in futures:
            for check, found in fut.result():
                report.add(check, found)
                report.runs += 1
    report.seconds = time.perf_counter() - start
    return report


__all__ = ["Report", "checked_targets", "covering_plan", "lenient_misses", "near_miss_kernel",
           "near_misses", "pairs_of", "run_matrix", "toolkit_of", "value_gate_kernels"]
