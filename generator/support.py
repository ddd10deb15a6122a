"""``ptxgen support OPCODE [--target T] [--ptx-isa X.Y]``: where is a form supported?

Answers from the generated module ``ptxgen.isa.ptx`` (the spec's rules as
data) through :mod:`ptxgen.model.instructions`; nothing here reads YAML.

Exit status: 0 the form is valid and supported on the target at the version
(without --target: the form is valid, its support table is printed); 1 the
form is valid but not supported there (including a target that does not
exist at that version) - the places where it is supported are printed; 2 the
text is not a valid form (raised as :class:`SupportError`, reported on one
line by the CLI).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ptxgen.errors import printable
from ptxgen.model.calls import calls_for
from ptxgen.model.instructions import (
    Form,
    InstructionSet,
    first_allowed,
    lookup,
    spec_text,
    value_support,
    vkey,
)
from ptxgen.model.targets import Targets
from ptxgen.model.versions import matrix_at

EXIT_SUPPORTED, EXIT_UNSUPPORTED = 0, 1


class SupportError(ValueError):
    """Bad input: not a valid form, an unknown target or version (exit 2)."""


def _union(forms: tuple[Form, ...], targets: Targets,
           toolkit: str | None = None) -> dict[str, str]:
    """{target: first version} at which some operand variant of the form is supported."""
    out: dict[str, str] = {}
    for f in forms:
        for t, v in f.support_for(toolkit).matrix(targets).items():
            if t not in out or vkey(v) < vkey(out[t]):
                out[t] = v
    return {t.name: out[t.name] for t in targets.targets if t.name in out}


def _where(matrix: dict[str, str], targets: Targets, renames: bool = True) -> str:
    """``sm_100a (from 8.7), ...``; a renamed target with its span and new name, unless
    ``renames`` is off (a PTX ISA version's view, where each target has one name)."""
    parts = []
    for name, first in matrix.items():
        t = targets.get(name)
        span = f"from {first}"
        if t.until is not None and renames:
            last = [v for v in targets.versions if vkey(v) < vkey(t.until)][-1]
            span = (f"{first}" if first == last else f"{first}-{last}") + (
                f" only; renamed {t.renamed_to} from {t.until}")
        parts.append(f"{name} ({span})")
    return ", ".join(parts) or "no target"


def _variant_notes(forms: tuple[Form, ...], union: dict[str, str], targets: Targets,
                   toolkit: str | None = None) -> list[str]:
    """One note per distinct narrower support, naming the operands its variants share."""
    groups: dict[tuple[tuple[str, str], ...], list[set[str]]] = {}
    for f in forms:
        m = f.support_for(toolkit).matrix(targets)
        if m != union:
            parts = {p.strip() for p in f.variant_text.split(",") if p.strip()}
            groups.setdefault(tuple(m.items()), []).append(parts)
    notes = []
    for matrix, variants in groups.items():
        common = set.intersection(*variants)
        what = ", ".join(sorted(common)) if common else "some operand variants"
        notes.append(f"with {what}: {_where(dict(matrix), targets)}")
    return notes


def _value_gates(forms: tuple[Form, ...], targets: Targets,
                 toolkit: str | None, version: str | None = None) -> list[dict[str, Any]]:
    """The immediate values of the forms that exist only on some of their targets or
    versions (value gates): operand, values, gate id and {target: first version}. With
    ``version``, as of that PTX ISA version's view: the targets that exist then and have
    the values by then, and no gate whose values exist on no target yet (the view does
    not have them)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for f in forms:
        ins = f.instruction
        for u in f.operands:
            for op in ins.operands:
                if op.name != u.name:
                    continue
                for vg in op.value_gates:
                    if not vg.gate.when(f.params) or (u.name, vg.gate.id) in seen:
                        continue
                    seen.add((u.name, vg.gate.id))
                    value = first_allowed(vg.values)
                    matrix = value_support(ins, f.params, u, value, toolkit).matrix(targets)
                    if version is not None:
                        matrix = matrix_at(matrix, targets, version)
                        if not matrix:
                            continue
                    out.append({"operand": u.name, "values": spec_text(vg.values),
                                "gate": vg.gate.id, "support": matrix})
    return out


def _check_args(targets: Targets, target: str | None, version: str | None) -> str:
    if version is not None:
        from ptxgen.model.versions import (  # the same check as every --ptx-isa
            ViewError,
            check_version,
        )

        try:
            check_version(targets.versions, version)
        except ViewError as exc:
            raise SupportError(str(exc)) from None
    if target is not None and target not in targets.by_name:
        from ptxgen.names import did_you_mean

        raise SupportError(f"--target: unknown target {target!r}"
                           f"{did_you_mean(target, _target_spellings(target, targets.names))}; "
                           f"known: {', '.join(targets.names)}")
    return version or targets.newest


def _target_spellings(target: str, names: tuple[str, ...] | list[str]) -> list[str]:
    """The known targets, with ``sm100a`` (no underscore) mapped to ``sm_100a`` first."""
    t = target.lower()
    if t.startswith("sm") and not t.startswith("sm_") and "sm_" + t[2:] in names:
        return ["sm_" + t[2:]]
    return list(names)


def spelled_note(opcode: str, isa_opcode: str | None) -> str:
    """``"; valid; written in the ISA's order as ..."`` for an opcode written otherwise."""
    if isa_opcode is None or isa_opcode == opcode:
        return ""
    if opcode.split(".")[0] != isa_opcode.split(".")[0]:
        return f" (valid; written with the ISA's instruction name as {isa_opcode})"
    return f" (valid; written in the ISA's order as {isa_opcode})"


def answer(iset: InstructionSet, opcode: str, target: str | None = None,
           version: str | None = None, as_json: bool = False,
           toolkit: str | None = None) -> tuple[int, str]:
    """(exit status, text for stdout); raises SupportError for exit status 2.

    ``toolkit`` (a CUDA release of the spec's ``cuda_toolkits``, e.g. ``13.0``): answer
    for that toolkit's ptxas, whose recorded deviations from the ISA apply and whose
    newest PTX ISA version is the default; None: the ISA's rule.
    """
    targets = iset.targets
    if toolkit is not None:
        if toolkit not in targets.toolkit_names:
            raise SupportError(f"--toolkit: unknown toolkit {toolkit!r}; known: "
                               f"{', '.join(targets.toolkit_names)}")
        tk_targets = targets.for_toolkit(toolkit)
        if version is not None and version in targets.versions \
                and version not in tk_targets.versions:
            raise SupportError(f"--ptx-isa: {version}: CUDA {toolkit} knows PTX ISA versions "
                               f"up to {tk_targets.newest}")
        if target is not None and target in targets.by_name \
                and target not in tk_targets.by_name:
            return _unknown_to_toolkit(iset, opcode, target, version, toolkit, as_json)
        targets = tk_targets
    asked = _check_args(targets, target, version)
    found = lookup(iset, opcode)
    if not found.valid:
        raise SupportError(f"{printable(opcode)}: not a valid form: "
                           + "; ".join(found.problems))
    union = _union(found.forms, targets, toolkit)
    notes = _variant_notes(found.forms, union, targets, toolkit)
    assert found.instruction is not None
    result: dict[str, Any] = {
        "opcode": opcode, "instruction": found.instruction.name, "valid": True,
        "isa_opcode": found.isa_opcode or opcode,
        "ptx_isa": asked, "target": target, "toolkit": toolkit, "support": union,
        "variants": [{"operands": f.variant_text,
                      "support": f.support_for(toolkit).matrix(targets)}
                     for f in found.forms],
    }
    lines: list[str] = []
    code = EXIT_SUPPORTED
    spelled = spelled_note(opcode, found.isa_opcode)
    if target is None:
        shown = union if version is None else matrix_at(union, targets, asked)
        head = (f"{opcode}: supported at PTX ISA {asked} on" if version else
                f"{opcode}: a valid {found.instruction.name} form, supported on")
        lines.append(f"{head} {len(shown)} target(s){spelled}")
        lines += [f"  {t:<8} from PTX ISA {v}" for t, v in shown.items()]
        result["supported"] = None
    else:
        t = targets.get(target)
        ok = any(f.support_for(toolkit).supported(targets, target, asked)
                 for f in found.forms)
        result["supported"] = ok
        if ok:
            lines.append(f"{opcode}: supported on {target} at PTX ISA {asked} "
                         f"(from {union[target]}){spelled}")
        else:
            code = EXIT_UNSUPPORTED
            if not t.exists_at(asked):
                why = (f"{target} does not exist at PTX ISA {asked} "
                       + (f"(renamed {t.renamed_to} from {t.until})"
                          if t.until is not None and vkey(asked) >= vkey(t.until)
                          else f"(it exists from {t.since})"))
            elif target in union:
                why = f"needs PTX ISA {union[target]} on {target}"
            else:
                why = f"not supported on {target}"
            lines.append(f"{opcode}: not supported on {target} at PTX ISA {asked}: {why}{spelled}")
            lines.append(f"  supported on: {_where(union, targets)}")
    calls = [c for c in dict.fromkeys(calls_for(f) for f in found.forms) if c is not None]
    result["calls"] = [{"wrapper": c.wrapper, "cpp": c.cpp, "python": c.python,
                        "cpp_objects": c.objects} for c in calls]
    for c in calls:
        lines.append(f"  C++:    {c.cpp}")
        lines.append(f"  Python: {c.python}")
        if c.objects:
            lines.append(f"  C++ with descriptor objects: {c.objects}")
    gated = _value_gates(found.forms, targets, toolkit, version)
    result["value_gates"] = gated
    for g in gated:
        where = _where(g["support"], targets, renames=version is None)
        lines.append(f"  immediate {g['operand']} {g['values']} [{g['gate']}]: only on "
                     + (where if g["support"] else "no target")
                     + (f" at PTX ISA {asked}" if version is not None else ""))
    lines += [f"  note: {n}" for n in notes]
    if as_json:
        return code, json.dumps(result, indent=2)
    return code, "\n".join(lines)


def _unknown_to_toolkit(iset: InstructionSet, opcode: str, target: str,
                        version: str | None, toolkit: str, as_json: bool) -> tuple[int, str]:
    """The answer (exit 1) for a target the ISA has but the toolkit's ptxas does not know
    (it came after the toolkit), as for a target that does not exist at a PTX ISA version."""
    targets = iset.targets.for_toolkit(toolkit)
    asked = _check_args(targets, None, version)
    found = lookup(iset, opcode)
    if not found.valid or found.instruction is None:
        raise SupportError(f"{printable(opcode)}: not a valid form: " + "; ".join(found.problems))
    union = _union(found.forms, targets, toolkit)
    t = iset.targets.get(target)
    why = (f"CUDA {toolkit} does not know {target} (its ptxas writes PTX ISA up to "
           f"{targets.newest}; {target} exists from PTX ISA {t.since})")
    if as_json:
        return EXIT_UNSUPPORTED, json.dumps({
            "opcode": opcode, "instruction": found.instruction.name, "valid": True,
            "ptx_isa": asked, "target": target, "toolkit": toolkit, "support": union,
            "supported": False, "reason": why}, indent=2)
    return EXIT_UNSUPPORTED, (f"{opcode}: not supported on {target} with CUDA {toolkit}: "
                              f"{why}\n  supported with CUDA {toolkit} on: "
                              f"{_where(union, targets)}")


def run(opcode: str, target: str | None, version: str | None, as_json: bool,
        toolkit: str | None = None) -> tuple[int, str]:
    """Answer from the generated rules (``ptxgen.isa.ptx``)."""
    try:
        from ptxgen.isa import ptx
    except ImportError as exc:  # pragma: no cover - only before the first generate
        raise SupportError(f"the generated module ptxgen.isa.ptx is missing ({exc}); "
                           "run 'ptxgen generate'") from None
    return answer(ptx.instruction_set(), opcode.strip(), target, version, as_json, toolkit)


def run_batch(lines: Iterable[str], target: str | None, version: str | None, as_json: bool,
              toolkit: str | None = None) -> tuple[int, str]:
    """``support -``: one answer per opcode line (blank lines skipped), in order; with
    ``as_json`` one JSON object per line. An invalid opcode is an answer too (``valid``:
    false with its problem). Exit status: 0 every form supported, 1 otherwise; a bad
    --target, --ptx-isa or --toolkit raises SupportError."""
    out: list[str] = []
    code = EXIT_SUPPORTED
    for raw in lines:
        opcode = raw.strip()
        if not opcode:
            continue
        try:
            c, text = run(opcode, target, version, as_json, toolkit)
        except SupportError as exc:
            if any(str(exc).startswith(p) for p in ("--target", "--ptx-isa", "--toolkit")):
                raise
            c = EXIT_UNSUPPORTED
            text = (json.dumps({"opcode": opcode[:200], "valid": False, "problem": str(exc)})
                    if as_json else f"{str(exc)[:2000]}")
        else:
            if as_json:
                text = json.dumps(json.loads(text))
        code = max(code, c)
        out.append(text)
    return code, "\n".join(out)
