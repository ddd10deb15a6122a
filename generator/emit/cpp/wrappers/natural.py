"""The packs in natural C++ types (issue 26): ``ptxgen/ptx/natural.hpp``, an opt-in header
of overloads beside the raw-bits wrappers, which it calls.

One rule, read from the spec's operand types: an operand whose register type is chosen
``by`` a qualifier (``type: {by: dtype, ...}``) that the wrapper fixes to a value of
:data:`NATURAL` is that C++ type (``.bf16x2`` -> ``__nv_bfloat162``); the two ``.f32``
sources of such a pack (``a`` and ``b`` of ``cvt.rn.bf16x2.f32 d, a, b``) are one
``float2`` whose ``x`` becomes the pack's ``x`` (its low half: the raw wrapper gets
``(v.y, v.x)``, since PTX puts ``a`` in the upper half); a vector operand of two or four
32- or 64-bit registers that another operand holds whole (a pack: ``mov.b64 d, {a, b}``)
is ``uint2`` / ``uint4`` / ``ulonglong2``, and such an output vector is returned. An
overload is made only where a parameter changes (C++ does not overload on the return type
alone). The header includes ``cuda_fp16.h`` and ``cuda_bf16.h`` only when a wrapper it
overloads uses them, and ``ptxgen/ptx.hpp`` does not include it: the cost of those headers
is paid by the translation units that ask for it."""

from __future__ import annotations

from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp.wrappers.base import OUT, REG
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model.calls import _fixed, wrapper_name
from ptxgen.model.instructions import Form, Instruction, InstructionSet, OperandUse

#: PTX type (a qualifier value) -> (its natural C++ type, the header that declares it)
NATURAL = {"f16x2": ("__half2", "cuda_fp16.h"), "bf16x2": ("__nv_bfloat162", "cuda_bf16.h")}
#: (register type, count) of a vector operand -> its CUDA vector type
VECTORS: dict[tuple[str, int | None], str] = {
    ("b32", 2): "uint2", ("b32", 4): "uint4", ("b64", 2): "ulonglong2"}
_FIELDS = "xyzw"


def _natural_of(ins: Instruction, fixed: dict[str, str], name: str) -> str | None:
    op = next((o for o in ins.operands if o.name == name), None)
    return None if op is None else _chosen(op.type, fixed)


def _chosen(spec: Any, fixed: dict[str, str]) -> str | None:
    """The qualifier value that chose an operand's register type (``{by: q, values: ...,
    default: ...}``, nested), where the wrapper fixes it."""
    if not isinstance(spec, dict) or not isinstance(spec.get("by"), str):
        return None
    value = fixed.get(spec["by"])
    if value is None:
        return None
    if value in spec.get("values", {}):
        inner = spec["values"][value]
        return _chosen(inner, fixed) if isinstance(inner, dict) else value
    if isinstance(spec.get("default"), dict):
        return _chosen(spec["default"], fixed)
    return value


def _overload(ins: Instruction, w: Any, forms: list[Form]) -> dict[str, Any] | None:
    """The natural overload of the forms of wrapper ``w`` that have one operand list."""
    uses: tuple[OperandUse, ...] = forms[0].operands
    if any(u.kind not in ("register", "vector") or u.joined for u in uses):
        return None
    fixed = _fixed(ins, w)
    # a vector is a pack where another operand is a register of all its bits
    bits = {int(u.type[1:]) for u in uses if u.kind == "register" and u.type}
    packs = {u.name for u in uses if u.kind == "vector" and u.type and
             int(u.type[1:]) * int(u.count or 0) in bits}
    outs = [u for u in uses if u.io == "out"]
    ins_ = [u for u in uses if u.io != "out"]
    natural = {u.name: NATURAL[n][0] for u in uses
               if (n := _natural_of(ins, fixed, u.name)) in NATURAL and u.kind == "register"}
    params: list[str] = []
    args: list[str] = []
    pre: list[str] = []
    changed = False
    pair = len(ins_) >= 2 and ins_[0].type == ins_[1].type == "f32" and \
        outs and outs[0].name in natural and ins_[0].kind == ins_[1].kind == "register"
    for i, u in enumerate(ins_):
        if pair and i == 0:
            params.append("float2 v")
            args += ["v.y", "v.x"]
            changed = True
        elif pair and i == 1:
            continue
        elif u.name in natural:
            params.append(f"{natural[u.name]} {u.name}")
            args.append(f"detail::natural_bits<{REG[str(u.type)][0]}>({u.name})")
            changed = True
        elif u.name in packs and (str(u.type), u.count) in VECTORS:
            params.append(f"{VECTORS[(str(u.type), u.count)]} {u.name}")
            elems = ", ".join(f"{u.name}.{_FIELDS[k]}" for k in range(int(u.count or 0)))
            pre.append(f"const {REG[str(u.type)][0]} {u.name}_[{u.count}] = {{{elems}}};")
            args.append(f"{u.name}_")
            changed = True
        elif u.kind == "register":
            params.append(f"{REG[str(u.type)][0]} {u.name}")
            args.append(u.name)
        else:
            return None
    fn = wrapper_name(forms[0], w)
    call = f"{fn}<Ptxgen...>"
    if len(outs) == 1 and outs[0].name in packs and \
            (str(outs[0].type), outs[0].count) in VECTORS:
        o = outs[0]
        vt = VECTORS[(str(o.type), o.count)]
        pre.append(f"{REG[str(o.type)][0]} {o.name}_[{o.count}];")
        out_pos = [u.name for u in uses].index(o.name)
        args.insert(out_pos, f"{o.name}_")
        elems = ", ".join(f"{o.name}_[{k}]" for k in range(int(o.count or 0)))
        return {"name": fn, "ret": vt, "params": params, "pre": pre,
                "body": f"{call}({', '.join(args)}); return {vt}{{{elems}}};",
                "headers": set()} if params else None
    if not changed or len(outs) != 1 or outs[0].kind != "register":
        return None
    o = outs[0]
    raw = f"{call}({', '.join(args)})"
    if o.name in natural:
        ret, body = natural[o.name], f"return detail::natural_from<{natural[o.name]}>({raw});"
    else:
        ret, body = REG[str(o.type)][0], f"return {raw};"
    used = {NATURAL[_natural_of(ins, fixed, u.name) or ""][1] for u in uses if u.name in natural}
    return {"name": fn, "ret": ret, "params": params, "pre": pre, "body": body,
            "headers": used}


def emit_natural(iset: InstructionSet, stems: dict[str, str]) -> Files:
    """``ptxgen/ptx/natural.hpp``: the overloads of every wrapper the rule gives one."""
    functions: list[dict[str, Any]] = []
    files: set[str] = set()
    for ins in iset.instructions:
        # each wrapper's forms by operand list, in one walk of the forms
        lists: dict[int, dict[tuple[tuple[Any, ...], ...], list[Form]]] = {}
        for f in ins.forms:
            key = tuple((u.name, u.kind, u.type, u.count, u.io) for u in f.operands)
            lists.setdefault(id(ins.wrapper_of(f)), {}).setdefault(key, []).append(f)
        for w in ins.wrappers:
            for forms in lists.get(id(w), {}).values():
                ov = _overload(ins, w, forms)
                if ov is not None and ov not in functions:
                    functions.append(ov)
                    files.add(f"ptx/{stems[ins.spec_file]}.hpp")
    headers = sorted({h for f in functions for h in f["headers"]})
    return {f"{OUT}/natural.hpp": render(
        "cpp/natural.hpp.j2", functions=functions, includes=sorted(files), cuda=headers,
        notice=[escape.cpp_comment_text(x) for x in generated_notice(
            sorted({i.spec_file for i in iset.instructions}), "cpp/natural.hpp.j2")])}
