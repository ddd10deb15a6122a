"""Target gating of the wrappers: support masks, the targets a refusal names and the
name of the undefined function a call on a target without the form resolves to."""

from __future__ import annotations

from collections.abc import Iterable

from ptxgen import escape
from ptxgen.model.instructions import (
    Form,
    Instruction,
    Support,
    Wrapper,
    vkey,
)
from ptxgen.model.targets import Targets

# -- the wrappers --------------------------------------------------------------------------

def _mask_bits(targets: Targets, names: Iterable[str]) -> int:
    """The support mask of ``names``: one bit per target, in the order of the targets."""
    memo = targets.memo("cpp_mask")
    key = names if isinstance(names, frozenset) else None
    hit = memo.get(key) if key is not None else None
    if hit is not None:
        result: int = hit
        return result
    bits = 0
    index = targets.index
    for n in names:
        bits |= 1 << index[n]
    if key is not None:
        memo[key] = bits
    return bits


def _mask(targets: Targets, names: Iterable[str]) -> str:
    """The support mask as the C++ literal the headers write (``0x...ull``)."""
    return f"0x{_mask_bits(targets, names):x}ull"


def and_later_from(targets: Targets, names: frozenset[str]) -> int:
    """The ``__CUDA_ARCH__`` from which a form is supported whatever the target (see
    :meth:`ptxgen.model.targets.Targets.arch_from`)."""
    return targets.arch_from(names)


def _since(since: str | None) -> int:
    if since is None:
        return 0
    major, minor = vkey(since)
    return major * 10 + minor


def describe_targets(targets: Targets, names: frozenset[str]) -> str:
    """Compact target list for identifiers: sm_80_and_later, or the names."""
    memo = targets.memo("describe_targets")
    hit = memo.get(names)
    if hit is None:
        sm = targets.and_later.get(names)
        hit = memo[names] = (f"sm_{sm}_and_later" if sm is not None else
                             "_".join(n for n in targets.names if n in names))
    result: str = hit
    return result


def error_name(w: Wrapper, targets: Targets, names: frozenset[str], since: str | None) -> str:
    ver = (since or targets.versions[0]).replace(".", "_")
    return escape.ident(f"ptxgen_unsupported_target_{w.name}_is_only_on_"
                        f"{describe_targets(targets, names)}_from_ptx_isa_{ver}")


def any_form_error(w: Wrapper, targets: Targets, supports: Iterable[Support]) -> str:
    """The refusal of wrapper ``w`` in a device pass whose target has no form of its file
    (its one declaration there, like the host pass's, knows no form): named after every
    target and the earliest PTX ISA version of any of its forms."""
    sups = list(supports)
    names = frozenset().union(*(s.targets for s in sups))
    since = None if any(s.since_all is None for s in sups) else \
        min((s.since_all for s in sups if s.since_all is not None), key=vkey, default=None)
    return error_name(w, targets, names, since)


# -- the recorded toolkit deviations ---------------------------------------------------------

def toolkit_refusals(ins: Instruction, f: Form) -> tuple[tuple[str, str, int, str], ...]:
    """The compile-time refusals of form ``f`` by the compiling toolkit: for each toolkit
    whose recorded deviations (spec ``deviations:`` with ``toolkits:``) refuse the form on
    a target where the ISA has it at the PTX ISA version that toolkit writes, (toolkit,
    the targets' mask where that toolkit's ptxas accepts it there, the ``__CUDA_ARCH__``
    from which it does, the message: the deviations and the toolkits that accept the
    form). Deviations that accept more than the ISA refuse nothing: the wrappers keep the
    ISA's gates."""
    if not any(d.when(f.params) for d in ins.deviations):
        return ()  # the toolkits' support is the ISA's
    targets = ins.targets
    assert targets is not None
    recorded = sorted({t for d in ins.deviations for t in d.toolkits}
                      | {c for c, _ in targets.toolkits[-1:]}, key=vkey)
    isa = f.support.matrix(targets)
    out: list[tuple[str, frozenset[str], list[str]]] = []
    refused_by: list[str] = []
    known = {c for c, _ in targets.toolkits}  # a version view knows the toolkits up to it
    for toolkit in recorded:
        if toolkit not in known or not any(toolkit in d.toolkits for d in ins.deviations):
            continue
        version = vkey(targets.toolkit_version(toolkit))
        mine = f.support_for(toolkit)
        theirs = mine.matrix(targets)
        accepted = frozenset(t for t, v in theirs.items() if vkey(v) <= version)
        if all(t in accepted for t, v in isa.items() if vkey(v) <= version):
            continue
        refused_by.append(toolkit)
        devs = [d.id for d in ins.deviations if toolkit in d.toolkits and d.id in mine.gates]
        out.append((toolkit, accepted, devs))
    result = []
    for toolkit, accepted, devs in out:
        others = [t for t in recorded if t not in refused_by]
        accept = (f"CUDA {' and '.join(others)} accept{'s' if len(others) == 1 else ''} it"
                  if others else "the PTX ISA allows it")
        msg = (f"ptxgen: {ins.name}: ptxas of CUDA {toolkit} refuses {f.opcode} on this target "
               f"(spec deviation {', '.join(devs)}); {accept}: build with "
               f"{'CUDA ' + others[-1] if others else 'another toolkit'}")
        major, minor = vkey(toolkit)
        result.append((f"{major * 100 + minor}", _mask(targets, accepted),
                       and_later_from(targets, accepted) if accepted else 0,
                       escape.cpp_message(msg)))
    return tuple(result)
