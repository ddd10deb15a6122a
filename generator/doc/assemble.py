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


def assemble_proposals(proposals: Sequence[Proposal], spec: Spec, assemblers: Sequence[Any],
                       make_kernel: Callable[[str, tuple[str, ...]], Any]) -> None:
    targets = spec.targets or (spec.instructions.targets if spec.instructions else None)
    if targets is None:
        return
    todo = [(p, op) for p in proposals for op in p.forms if "{" not in op and " " not in op]
    kernels = []
    for p, op in todo:
        form = nearest(spec, op)
        if form is not None:
            kernels.append((p, make_kernel(op, tuple(statement(form, op)))))
    for asm in assemblers:
        names = [t.name for t in targets.targets if t.name in asm.gpu_names]
        ok: dict[str, list[str]] = {}
        needs: dict[str, str] = {}
        for target in names:
            from_arch = "compute_" + target[len("sm_"):]
            got = asm.assemble(target, asm.newest, from_arch, [k for _, k in kernels])
            for key, errors in got.items():
                if not errors:
                    ok.setdefault(key, []).append(target)
                for e in errors:
                    m = _NEEDS.search(e)
                    if m:
                        needs[key] = m.group(1)
        for p, k in kernels:
            where = ok.get(k.key, [])
            said = (f"accepts {k.key} on {', '.join(where)} (at .version {asm.newest})"
                    if where else f"refuses {k.key} on every target")
            p.assembled[f"ptxas {asm.release}"] = said
