"""When each element of the model exists: the PTX ISA versions of a form, of an
instruction and of every value of its qualifiers and operand choices.

The other elements carry their versions as fields: a target its ``since`` and ``until``
(:meth:`Target.exists_at`), a gate, value gate or deviation its ``since`` and targets, a
descriptor, MMA kind and layout variant its ``since``. A form exists at a version when it
is supported then on some target that exists then (:func:`supported_at`); everything an
instruction is made of exists while some form of it that uses it does. This module
computes those versions once per instruction (:func:`lifetime`, kept with it), so that a
view of the spec as of one version (:mod:`ptxgen.model.versions`) is a filter over
them: the forms, the instructions and the values that exist then.

Versions are sets, not ranges: a form only on a target that was renamed (sm_101a before
9.0) exists until the rename and not after.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxgen.model.instructions import Instruction, Support
from ptxgen.model.targets import Targets
from ptxgen.spec_util import vkey


def supported_at(support: Support, targets: Targets, version: str) -> bool:
    """Whether a form with ``support`` exists at ``version``: supported on some target
    that exists then, from that version or earlier."""
    if support.since is not None and vkey(support.since) > vkey(version):
        return False
    by_name = targets.by_name
    return any(t in by_name and by_name[t].exists_at(version) for t in support.targets)


def target_versions(targets: Targets) -> dict[str, frozenset[str]]:
    """{target: the versions of the spec at which it exists}, made once per targets."""
    memo = targets.memo("lifetimes")
    hit = memo.get("targets")
    if hit is None:
        hit = memo["targets"] = {t.name: frozenset(v for v in targets.versions
                                                   if t.exists_at(v))
                                 for t in targets.targets}
    result: dict[str, frozenset[str]] = hit
    return result


def support_versions(support: Support, targets: Targets) -> frozenset[str]:
    """The versions at which a form with ``support`` exists (:func:`supported_at` at
    each), made once per (targets, since) of a support."""
    memo = targets.memo("lifetimes")
    key = (support.targets, support.since)
    hit = memo.get(key)
    if hit is None:
        per_target = target_versions(targets)
        on = frozenset().union(*(per_target[t] for t in support.targets if t in per_target))
        if support.since is not None:
            first = vkey(support.since)
            on = frozenset(v for v in on if vkey(v) >= first)
        hit = memo[key] = on
    result: frozenset[str] = hit
    return result


@dataclass(frozen=True)
class Lifetime:
    """When the parts of one instruction exist."""

    #: per form of the instruction (in its order), the versions at which it exists
    forms: tuple[frozenset[str], ...]
    #: the versions at which some form exists
    versions: frozenset[str]
    #: {parameter: {value: the versions at which some form with that value exists}}
    values: dict[str, dict[str, frozenset[str]]]

    def first(self, order: tuple[str, ...]) -> str | None:
        """The first version (of ``order``, the spec's) at which the instruction exists."""
        return next((v for v in order if v in self.versions), None)

    def last(self, order: tuple[str, ...]) -> str | None:
        """The last version (of ``order``) at which the instruction exists."""
        return next((v for v in reversed(order) if v in self.versions), None)


def lifetime(ins: Instruction) -> Lifetime:
    """When the forms, the instruction and each parameter value of ``ins`` exist (made
    once per instruction and kept with it)."""
    hit = ins.__dict__.get("_lifetime")
    if hit is not None:
        result: Lifetime = hit
        return result
    assert ins.targets is not None
    targets = ins.targets
    forms = tuple(support_versions(f.support, targets) for f in ins.forms)
    values: dict[str, dict[str, frozenset[str]]] = {name: {} for name, _ in ins.params}
    # forms share their versions: one union per distinct (value, versions)
    seen: set[tuple[str, str, frozenset[str]]] = set()
    for f, on in zip(ins.forms, forms, strict=True):
        for name, value in f.values:
            key = (name, value, on)
            if key in seen:
                continue
            seen.add(key)
            column = values[name]
            column[value] = column.get(value, frozenset()) | on
    out = Lifetime(forms, frozenset().union(*forms), values)
    ins.__dict__["_lifetime"] = out
    return out


__all__ = ["Lifetime", "lifetime", "support_versions", "supported_at", "target_versions"]
