"""Checks across spec files: the PTX ISA versions of descriptors (``since``).

A descriptor exists from the first PTX ISA version at which an instruction that
consumes it is supported on some target: ``since.version`` must be exactly the
first version of any form of ``since.consumers`` that takes the operand, and
``since.kinds[].version`` the first version of those forms that match the kind's
``when``. Where the instruction spec links an operand to the descriptor
(``operand.descriptor``), that operand is a consumer as well. A descriptor without
``since`` exists at every version (revisions of the spec from before ``since``
validate as they did). Runs after the per-file checks passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ptxgen import instructions as model
from ptxgen.errors import Diagnostic
from ptxgen.load import Document


def _first(forms: Iterable[model.Form], targets: model.Targets) -> str | None:
    firsts = [v for f in forms for v in f.support.matrix(targets).values()]
    return min(firsts, key=model.vkey) if firsts else None


def _uses(form: model.Form, operand: str) -> bool:
    return any(u.name == operand for u in form.operands)


def check_versions(descriptor_docs: list[Document], targets_docs: list[Document],
                   instruction_docs: list[Document]) -> list[Diagnostic]:
    if not targets_docs or not instruction_docs:
        return []
    tdata = targets_docs[0].data
    versions = tuple(str(v) for v in tdata["ptx_isa_versions"])
    iset = model.build_instruction_set(
        tdata, [(d.rel, d.data) for d in sorted(instruction_docs, key=lambda d: d.rel)])
    by_id = {i.id: i for i in iset.instructions}
    errors: list[Diagnostic] = []
    for doc in descriptor_docs:
        data = doc.data
        name = data["descriptor"]
        since = data.get("since")
        if since is None:
            continue  # exists at every version (older revisions of the spec have no since)
        errors.extend(_check(doc, name, since, versions, by_id, iset.targets))
    return errors


def _consumers(name: str, since: Mapping[str, Any], by_id: Mapping[str, model.Instruction],
               doc: Document, errors: list[Diagnostic]
               ) -> list[tuple[model.Instruction, str, str | None]]:
    """(instruction, operand, kind qualifier) of every consumer."""
    out: list[tuple[model.Instruction, str, str | None]] = []
    for j, c in enumerate(since["consumers"]):
        path = ("since", "consumers", j)
        ins = by_id.get(c["instruction"])
        if ins is None:
            errors.append(doc.source.diag(path + ("instruction",),
                                          f"no instruction {c['instruction']!r} "
                                          f"(known: {', '.join(sorted(by_id))})"))
            continue
        names = {o.name for o in ins.operands} | {a.name for o in ins.operands
                                                   for a in o.choice}
        if c["operand"] not in names:
            errors.append(doc.source.diag(path + ("operand",),
                                          f"{ins.id} has no operand {c['operand']!r}"))
            continue
        out.append((ins, c["operand"], None))
    for ins in by_id.values():
        for o in ins.operands:
            link = getattr(o, "descriptor", None)
            if link and link[0] == name and (ins, o.name, None) not in out:
                out.append((ins, o.name, link[1]))
    return out


def _check(doc: Document, name: str, since: Mapping[str, Any], versions: tuple[str, ...],
           by_id: Mapping[str, model.Instruction], targets: model.Targets
           ) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    stated: list[tuple[tuple[str | int, ...], str]] = [(("since", "version"), since["version"])]
    stated += [(("since", "kinds", j, "version"), k["version"])
               for j, k in enumerate(since.get("kinds", ()))]
    for at, v in stated:
        if v not in versions:
            errors.append(doc.source.diag(at, f"PTX ISA version {v} is not in "
                                                f"ptx_isa_versions ({versions[0]} ... "
                                                f"{versions[-1]})"))
    prov = [since["provenance"]] + [k["provenance"] for k in since.get("kinds", ())]
    for j, p in enumerate(prov):
        if not p.get("seeds") and not p.get("ptxas"):
            where = ("since", "provenance") if j == 0 else ("since", "kinds", j - 1,
                                                            "provenance")
            errors.append(doc.source.diag(where, "a version that no seed states needs its "
                                                "ptxas evidence (provenance.ptxas)"))
    consumers = _consumers(name, since, by_id, doc, errors)
    if errors or not consumers:
        return errors
    forms = [f for ins, op, _ in consumers for f in ins.forms if _uses(f, op)]
    first = _first(forms, targets)
    what = ", ".join(f"{ins.name} {op}" for ins, op, _ in consumers)
    if first != since["version"]:
        exists = f"exists from PTX ISA {first}" if first else "never exists"
        errors.append(doc.source.diag(("since", "version"), f"{name} is consumed by {what}, "
                                      f"which {exists}, not {since['version']}"))
    kinds = data_kinds(doc.data)
    for j, k in enumerate(since.get("kinds", ())):
        path: tuple[str | int, ...] = ("since", "kinds", j)
        if k["kind"] not in kinds:
            errors.append(doc.source.diag(path + ("kind",), f"{k['kind']!r} is not a kind of "
                                                            f"{name} ({', '.join(kinds)})"))
            continue
        try:
            when = model.Condition.build(k["when"])
            kforms = [f for f in forms if when(f.params)]
        except (KeyError, ValueError) as exc:
            errors.append(doc.source.diag(path + ("when",), f"not a condition on the "
                                                            f"consumers' qualifiers: {exc}"))
            continue
        kfirst = _first(kforms, targets)
        if kfirst != k["version"]:
            errors.append(doc.source.diag(
                path + ("version",),
                f"the forms of {what} with {when.text()} "
                f"{'exist from PTX ISA ' + kfirst if kfirst else 'never exist'}, not "
                f"{k['version']}"))
    for ins, op, kind_of in consumers:
        if kind_of is None:
            continue
        later = {k["kind"]: k["version"] for k in since.get("kinds", ())}
        for kind in kinds:
            kforms = [f for f in ins.forms if _uses(f, op) and f.params.get(kind_of) == kind]
            kfirst = _first(kforms, targets)
            want = later.get(kind, since["version"])
            if kfirst is not None and kfirst != want and model.vkey(kfirst) > model.vkey(
                    since["version"]):
                errors.append(doc.source.diag(
                    ("kinds",), f"kind {kind}: the forms of {ins.name} with {kind_of} = "
                                f"{kind} exist from PTX ISA {kfirst}; since.kinds says "
                                f"{want}"))
    return errors


def data_kinds(data: Mapping[str, Any]) -> list[str]:
    return [str(k) for k in data.get("kinds", ())]
