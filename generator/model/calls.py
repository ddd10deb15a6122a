"""The calls that implement a form: its C++ wrapper and its Python builder.

:func:`calls_for` renders, for one valid form, the C++ call of its wrapper (the wrapper
of the instruction whose ``when`` holds, its template arguments in declaration order:
the qualifiers that vary over the wrapper's forms, required ones first, then the
immediate operands) and the keyword call of its Python builder, every template
parameter and argument named (``/*shape=*/ldmatrix_shape::m8n8``, ``shape="m8n8"``).
``ptxgen support`` prints them and ``ptxgen scan`` proposes them; the emitters declare
the same order (``emit/cpp/wrappers/``: ``template_params``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ptxgen import escape
from ptxgen.model.instructions import FALSE, NONE, TRUE, Form, Instruction, OperandUse, Wrapper
from ptxgen.names import enum_member
from ptxgen.source import split_operands

#: (id of the instruction, wrapper name) -> (instruction, {qualifier: its one value})
_FIXED: dict[tuple[int, str], tuple[Instruction, dict[str, str]]] = {}


@dataclass(frozen=True)
class Calls:
    """The wrapper and builder calls of one form."""

    wrapper: str  # the C++ wrapper's name (ptxgen::ptx::NAME)
    cpp: str
    python: str
    #: the C++ call with the descriptor operands given as constant descriptor objects
    #: (``ptxgen::ptx::static_desc<idesc>{}``, issue 28) and what each is, or None: no descriptor
    objects: str | None = None


def wrapper_of(form: Form) -> Wrapper | None:
    """The wrapper of the instruction that compiles ``form`` (None: it has none)."""
    try:
        return form.instruction.wrapper_of(form)  # the first whose condition holds
    except KeyError:
        return None


def wrapper_name(form: Form, w: Wrapper) -> str:
    """The C++ function of ``form`` under wrapper ``w``: its name, with the suffix of the
    operand alternative the form takes (``wgmma_mma_async_regs`` for A in registers)."""
    variant = dict(form.variant)
    suffix = "".join(a.suffix for o in form.instruction.operands if o.choice
                     for a in o.choice if a.name == variant.get(o.name))
    return escape.ident(w.name + suffix)


def _fixed(ins: Instruction, w: Wrapper) -> dict[str, str]:
    """The qualifiers with one value over every form of the wrapper: not parameters."""
    hit = _FIXED.get((id(ins), w.name))
    if hit is not None and hit[0] is ins:
        return hit[1]
    values: dict[str, set[str]] = {q.name: set() for q in ins.qualifiers}
    for f in ins.forms:
        if f.instruction.wrapper_of(f) is w:
            for q in ins.qualifiers:
                values[q.name].add(f.params[q.name])
    fixed = {k: next(iter(v)) for k, v in values.items() if len(v) == 1}
    _FIXED[(id(ins), w.name)] = (ins, fixed)
    return fixed


def _cpp_value(ins: Instruction, name: str, value: str) -> str:
    q = ins.qualifier(name)
    if q.flag:
        return "true" if value == TRUE else "false"
    if q.numeric:
        return value
    enum = escape.ident(f"{ins.id}_{q.name}")
    member = "none" if value == NONE else escape.ident(enum_member(q.name, value))
    return f"{enum}::{member}"


def _py_value(ins: Instruction, name: str, value: str) -> str:
    q = ins.qualifier(name)
    if q.flag:
        return "True" if value == TRUE else "False"
    if value == NONE:
        return "None"
    return value if q.numeric else escape.py_str(value)


def calls_for(form: Form) -> Calls | None:
    """The C++ wrapper call and the Python builder call of ``form`` (None: no wrapper)."""
    ins = form.instruction
    w = wrapper_of(form)
    if w is None:
        return None
    fixed = _fixed(ins, w)
    free = sorted((q for q in ins.qualifiers if q.name not in fixed and not q.derived),
                  key=lambda q: q.optional)
    targs = [f"/*{q.name}=*/{_cpp_value(ins, q.name, form.params[q.name])}" for q in free]
    args: list[str] = []
    descs: dict[int, str] = {}  # index in args -> what the descriptor operand takes
    outs: list[str] = []
    py = [f"{q.name}={_py_value(ins, q.name, form.params[q.name])}"
          for q in ins.qualifiers
          if (not (q.optional or q.flag) or form.params[q.name] not in (FALSE, NONE))]
    for u in form.operands:
        name = escape.ident(u.name)
        if u.kind in ("sink", "special"):  # written by the wrapper: no argument
            py.append(f"{name}=True")
            continue
        py.append(f"{name}={name}")
        op = next((o for o in ins.operands
                   if o.name == u.name or any(a.name == u.name for a in o.choice)), None)
        if u.kind == "immediate":
            targs.append(f"/*{name}=*/{name}")
        elif u.kind == "immediates":
            targs += [f"/*{name}_{e}=*/{name}_{e}" for e, _ in u.elements]
        elif u.kind == "tensor":
            args += [f"/*{name}_map=*/{name}_map", f"/*{name}_coords=*/{name}_coords"]
        elif op is not None and op.io == "out" and u.kind in ("register", "predicate"):
            outs.append(name)
        else:
            args.append(f"/*{name}=*/{name}")
            link = ins.descriptor_links.get(u.name)
            if link is not None and u.kind not in ("vector", "immediate"):
                kind = f" .{link[1]}::{form.params[link[1]]}" if link[1] else ""
                descs[len(args) - 1] = f"{name}: ptxgen/{link[0]}.hpp{kind}"
    name = wrapper_name(form, w)
    head = f"ptxgen::ptx::{name}" + (f"<{', '.join(targs)}>" if targs else "")
    lhs = (f"{outs[0]} = " if len(outs) == 1 else f"auto [{', '.join(outs)}] = ") if outs else ""
    objects = None
    if descs:
        oargs = [f"/*{a.split('=*/')[1]}=*/ptxgen::ptx::static_desc<{a.split('=*/')[1]}>{{}}"
                 if i in descs else a for i, a in enumerate(args)]
        objects = (f"{lhs}{head}({', '.join(oargs)});  // static constexpr descriptor objects "
                   f"({'; '.join(descs.values())}); a run-time object is passed as it is")
    return Calls(name, f"{lhs}{head}({', '.join(args)});",
                 f"ptxgen.isa.ptx.{escape.ident(ins.id)}({', '.join(py)})", objects)


_INTEGER = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uU]?")


def operand_texts(form: Form, operands: tuple[str, ...]) -> dict[str, str] | None:
    """{operand name: its text} when ``operands`` (as written) fit ``form``'s operands,
    else None."""
    slots: list[list[OperandUse]] = []
    for u in form.operands:
        if (u.joined or u.in_tensor) and slots:
            slots[-1].append(u)
        else:
            slots.append([u])
    if len(slots) != len(operands):
        return None
    out: dict[str, str] = {}
    for slot, text in zip(slots, operands, strict=True):
        first = slot[0]
        if first.kind in ("address", "tensor") and not text.startswith("["):
            return None
        if first.kind in ("vector", "immediates") and not text.startswith("{"):
            return None
        if first.kind == "immediate" and _INTEGER.fullmatch(text) is None:
            return None
        if first.kind == "special" and text != first.text:
            return None
        if first.kind == "register" and text.startswith(("[", "{")):
            return None
        if first.kind == "tensor":
            inner = split_operands(text[1:-1])
            out[first.name] = text
            extra = [u for u in slot[1:]]
            for u, t in zip(extra, inner[2:], strict=False):
                out[u.name] = t
            continue
        if len(slot) > 1:
            parts = [p.strip() for p in text.split("|")]
            if len(parts) != len(slot):
                return None
            out.update((u.name, p) for u, p in zip(slot, parts, strict=True))
            continue
        out[first.name] = text
    return out


def form_written(forms: Sequence[Form], operands: Sequence[str]) -> Form | None:
    """The form of ``forms`` (one opcode's operand variants) whose operands fit the ones
    written (``operands``, as :func:`ptxgen.source.split_operands` splits them): by count,
    brackets and braces, immediates, and the special register named; None if none fits."""
    written = tuple(operands)
    # a special register's fixed text before a register, which any text fits
    ordered = sorted(forms, key=lambda f: not any(u.kind == "special" for u in f.operands))
    return next((f for f in ordered if operand_texts(f, written) is not None), None)
