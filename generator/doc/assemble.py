"""``doc check --ptxas``: each form a proposal adds, assembled with each ptxas.

A proposal names an opcode the spec lacks; its statement is made from the nearest
valid form of the same instruction (most opcode tokens in common): that form's
operands (declarations and operand text as the probe writes them) with the
proposal's opcode. It is assembled for every target of the spec at the assembler's
newest PTX ISA version; a refusal that names a version ("requires PTX ISA .version 9.4
or later") gives the first version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ptxgen.doc.check import Proposal
from ptxgen.model import Spec
from ptxgen.model import instructions as engine
from ptxgen.model.instructions import Form

_NEEDS = re.compile(r"requires PTX ISA \.version (\d+\.\d+) or later")


def _tokens(opcode: str) -> set[str]:
    return set(re.findall(r"\.[^.]+", opcode))


def nearest(spec: Spec, opcode: str) -> Form | None:
    iset = spec.instructions
    if iset is None:
        return None
    inss = iset.for_opcode(opcode)
    want = _tokens(opcode)
    best: tuple[int, Form] | None = None
    for ins in inss[:1]:
        for f in ins.forms:
            score = len(want & _tokens(f.opcode)) - len(_tokens(f.opcode) - want)
            if best is None or score > best[0]:
                best = (score, f)
    return best[1] if best else None


def statement(form: Form, opcode: str) -> list[str]:
    args, decls = engine.sample(form)
    text = engine.build(form.instruction, args)
    return [*decls, text.replace(form.opcode, opcode, 1)]


_GATING = ("requires PTX ISA .version", "not supported on .target", "requires .target sm_",
           "not supported on target", "does not support .target")


def is_gating_text(message: str) -> bool:
    """A refusal for the version or target (not the syntax)."""
    return any(g in message for g in _GATING)


def _first_versions(asm: Any, ok: dict[str, list[str]], kernels: Sequence[Any],
                    targets: Any) -> dict[str, str]:
    """The first PTX ISA version of each accepted kernel: assembled on its first target at
    the oldest version that target has, ptxas names the version it needs (or accepts)."""
    out: dict[str, str] = {}
    for k in kernels:
        where = ok.get(k.key)
        if not where:
            continue
        target = targets.get(where[0])
        version = str(getattr(target, "since", None) or asm.newest)
        for _ in range(4):  # each refusal names one version; a newer one may name another
            errors = asm.assemble(where[0], version, "compute_" + where[0][len("sm_"):],
                                  [k])[k.key]
            needs = [m.group(1) for e in errors for m in [_NEEDS.search(e)] if m]
            if not errors or not needs:
                break
            version = max(needs, key=engine.vkey)
        out[k.key] = version
    return out


def assemble_proposals(proposals: Sequence[Proposal], spec: Spec, assemblers: Sequence[Any],
                       make_kernel: Callable[[str, tuple[str, ...]], Any]) -> list[Proposal]:
    """The proposals with what each assembler says of their forms; a combination proposal
    keeps only the forms some assembler accepts (none: dropped, the document's syntax is
    only looser than the assemblers there)."""
    targets = spec.targets or (spec.instructions.targets if spec.instructions else None)
    if targets is None:
        return list(proposals)
    todo = [(p, op) for p in proposals for op in p.forms if "{" not in op and " " not in op]
    kernels = []
    for p, op in todo:
        form = nearest(spec, op)
        if form is not None:
            kernels.append((p, make_kernel(op, tuple(statement(form, op)))))
    accepted: set[tuple[int, str]] = set()
    for asm in assemblers:
        names = [t.name for t in targets.targets if t.name in asm.gpu_names]
        ok: dict[str, list[str]] = {}
        first_error: dict[str, str] = {}
        for target in names:
            from_arch = "compute_" + target[len("sm_"):]
            got = asm.assemble(target, asm.newest, from_arch, [k for _, k in kernels])
            for key, errors in got.items():
                if not errors:
                    ok.setdefault(key, []).append(target)
                else:
                    # the assembler's message: one about the syntax before a gating one
                    plain = [e for e in errors if not is_gating_text(e)]
                    if plain and is_gating_text(first_error.get(key, "requires .target sm_")):
                        first_error[key] = plain[0]
                    first_error.setdefault(key, errors[0])
        since = _first_versions(asm, ok, [k for _, k in kernels], targets)
        for p, k in kernels:
            where = ok.get(k.key, [])
            if where:
                said = (f"accepts {k.key} on {', '.join(where)} from PTX ISA "
                        f"{since.get(k.key, asm.newest)}")
            else:
                said = f"refuses {k.key} on every target: {first_error.get(k.key, '')}"
            p.assembled.setdefault(f"ptxas {asm.release}", []).append(said)
            if where:
                accepted.add((id(p), k.key))
    out: list[Proposal] = []
    for p in proposals:
        if p.kind == "instruction-combination":
            keep = [f for f in p.forms if (id(p), f) in accepted]
            if not keep:
                continue
            p.forms = keep
            p.message = (f"{p.message.split(':')[0]}: ptxas accepts {len(keep)} opcode(s) of "
                         f"{p.message.split('opcodes ')[1].split(' writes')[0]} that are no "
                         f"valid form of the spec, e.g. {keep[0]}")
            p.assembled = {tool: [line for line in said if any(
                f"{op} on" in line for op in keep)] for tool, said in p.assembled.items()}
        out.append(p)
    return out
