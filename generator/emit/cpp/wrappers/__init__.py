"""C++ emitter for the instruction side: spec -> generated/include/ptxgen/ptx/*.hpp.

Per instruction spec file ``<stem>.yaml`` three headers: ``ptx/<stem>.hpp`` (what a user
includes: enums, result structs, traits, and one declaration per wrapper name and operand
count for the passes that cannot use the forms), ``ptx/<stem>.device.hpp`` with the
inline-asm wrappers of every valid form and their checks, and ``ptx/<stem>.forms.hpp``
with the asm statements of the forms; ``<stem>.hpp`` includes the other two only in the
device passes whose target may have a form, so that no other pass even reads them;
``ptxgen/ptx/target.hpp`` has the target detection and the gating helpers, and the
umbrella ``ptxgen/ptx.hpp`` includes every wrapper header.

A wrapper (``wrappers`` in the spec) is a function template: the qualifiers its
condition does not fix are template parameters (enums, ints, bools), the
operands are function parameters (registers by value, vectors as arrays whose
element type and length are deduced, predicates as bool, immediates as ``imm<3>``
tags so they stay compile-time constants). Template parameters are named
``Ptxgen...`` so that a user's macros (``-DN=7``) do not reach them. Operand
alternatives (A from a descriptor or from Tensor Memory) give differently named
functions, optional operands overloads; ``<function>_operands<qualifiers>`` names
the array type of each array operand. Outputs are returned: one alone, several (a joined
d|p pair, an 8-bit register after it) in a ``<function>_result`` struct; an 8-bit output
(no inline-asm constraint has 8 bits) is written to a ``.reg .b8`` scratch register scoped
to the statement and widened into a 32-bit "=r" operand (``NARROW``). The host pass of
nvcc (cudafe++ and the host compiler, which never run device code) and a host compiler
see the enums, the result structs, the traits with the helpers they use, and one
declaration per wrapper name whose operands (``detail::host_arg``, those past the fewest of
its overloads defaulted) take any argument, braced lists too, and whose body returns the
wrapper's type: a kernel's calls parse there, and the device passes check them against the wrappers
(``PTXGEN_PTX_EXACT_HOST_DECLARATIONS`` shows the wrappers to the host pass too, e.g. for
an IDE). A device pass whose target has no form of the file sees the same declarations,
whose body calls the wrapper's refusal (``any_form_error``: it names every target of the
wrapper's forms). The wrappers' body, compiled in device passes only:

* a ``static_assert`` on each numeric qualifier (N) naming its values, one per rule
  of the spec, with the rule's message, so an invalid combination fails to compile
  with the reason, and for each array operand a check of its element type and
  length in a class template whose failing ``static_assert`` shows what the form
  needs and what was given as its template arguments (never "no instance of
  overloaded function"); no message has a backtick (nvcc prints them as ``?``);
* the form: its number (mixed radix over the qualifier template parameters) is
  looked up (``detail::form_of``) in a sorted constexpr table of the overload's forms,
  which gives its support class (targets, PTX ISA version, refusal; a table beside it)
  or none (a ``static_assert``: not a valid form). One ``if constexpr`` gates the call
  of the forms function ``detail::<wrapper>_forms<i><number>(operands)``;
* gating: the asm is only emitted when the target being compiled (detected
  from ``__CUDA_ARCH__``, ``__CUDA_ARCH_SPECIFIC__``,
  ``__CUDA_ARCH_FAMILY_SPECIFIC__`` and ``__CUDA_ARCH_FEAT_SM*_ALL``) is one
  the spec supports the form on. Elsewhere the branch calls an undefined
  ``extern "C" __device__`` function whose name says which targets have the
  form, so building for a target that lacks it fails in ptxas ("Unresolved
  extern function 'ptxgen_unsupported_target_...'") while nvcc's generic
  ``compute_XX`` PTX pass of an ``sm_XXa`` / ``sm_XXf`` build, which only
  verifies PTX, still succeeds.

The forms header holds each form's opcode text (two pieces, a head and a tail, from a
table of distinct pieces, in the order of the wrapper's form table) and one
``asm volatile(...)`` statement per distinct operand list, shared by
the forms that have it: the opcode is spliced into the template by a "C" operand (a
constant char array made, from the table, only for the forms a translation unit uses;
nvcc / NVRTC 12.5 and later). It is included only in device passes whose target may
have a form of the file (``PTXGEN_PTX_FAMILY``): an sm_100a pass never reads wgmma's
asm statements, nor the generic compute_90 pass of an sm_90a build, nor the host pass;
in such passes the wrappers are the declarations above, and a call compiles to its
refusal. Within a file, a wrapper whose forms are on fewer targets than the file's is
left out the same way (``_wrapper_guards``: ``#if`` around its overloads and its forms'
tables and asm functions). The qualifier ``static_assert``s that every overload of a
wrapper makes are one class template per wrapper (``_shared_checks``). The tables (forms,
opcode pieces, statement numbers, immediates' formats) are string literals
(``escape.cpp_bytes``: numbers packed in as few bytes as hold the largest): a compiler
takes a literal for a small fraction of the cost of an array of numbers or of pointers
to literals, which its front end evaluates element by element.
The cost of including a wrapper header is then that of its declarations everywhere
but in the one pass that can use its forms (benchmarks/bench_cpp_compile.py).

The package, in the order its modules import each other: ``base`` (generated names,
operand types, the condition algebra of the checks), ``helpers`` (the constexpr helpers
that derive values from qualifiers), ``gating`` (support masks and refusals),
``wrapper`` (one wrapper's overloads: checks, form tables, asm statements), ``header``
(the views of a file's three headers and of ``target.hpp``) and this module (the
emitter's parts and the calls the nvcc tests build).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ptxgen import escape

# the names other modules use (the descriptor-rule emitter, the diff's symbol table, tests)
from ptxgen.emit.cpp.wrappers.base import (
    NS,
    OBJECT_ADDRESS,
    OLD_COMPILER,
    OUT,
    _Cond,
    _stem,
    cpp_bool,
    enum_name,
    member_ident,
    operand_type,
    template_param,
    tparam,
)
from ptxgen.emit.cpp.wrappers.gating import any_form_error, error_name
from ptxgen.emit.cpp.wrappers.header import header_view, target_view
from ptxgen.emit.cpp.wrappers.helpers import _Helpers
from ptxgen.emit.cpp.wrappers.natural import emit_natural
from ptxgen.emit.cpp.wrappers.wrapper import _Wrapper
from ptxgen.emit.templates import Files, generated_notice, render
from ptxgen.model import Spec
from ptxgen.model.calls import wrapper_name
from ptxgen.model.instructions import (
    Instruction,
    InstructionSet,
)


def parts(spec: Spec) -> list[tuple[int, Callable[[], Files]]]:
    """The emitter in independent parts, each with its weight (its number of forms): one
    per instruction file (its wrapper headers), and the headers of them all."""
    iset = spec.instructions
    if iset is None:
        return []
    by_file: dict[str, list[Instruction]] = {}
    for ins in iset.instructions:
        by_file.setdefault(ins.spec_file, []).append(ins)
    out: list[tuple[int, Callable[[], Files]]] = [
        (sum(len(i.forms) for i in instrs), partial(_file_headers, iset, rel, instrs,
                                                    spec.select))
        for rel, instrs in by_file.items()]
    return [*out, (0, partial(_common_headers, iset, list(by_file)))]


def emit(spec: Spec) -> Files:
    files: Files = {}
    for _, part in parts(spec):
        files.update(part())
    return files


def _file_headers(iset: InstructionSet, rel: str, instrs: list[Instruction],
                  select: str | None) -> Files:
    stem = _stem(rel)
    view = header_view(iset, rel, instrs, select)
    files = {f"{OUT}/{stem}.hpp": render("cpp/wrappers.hpp.j2", **view),
             f"{OUT}/{stem}.device.hpp": render("cpp/wrapper_device.hpp.j2", **view)}
    if view["has_forms"]:
        files[f"{OUT}/{stem}.forms.hpp"] = render("cpp/wrapper_forms.hpp.j2", **view,
                                                  old_compiler=OLD_COMPILER)
    return files


def _common_headers(iset: InstructionSet, rels: list[str]) -> Files:
    return {**emit_natural(iset, {r: _stem(r) for r in rels}),
            f"{OUT}/target.hpp": render("cpp/target.hpp.j2", **target_view(iset)),
            "include/ptxgen/ptx.hpp": render(
                "cpp/ptx.hpp.j2", headers=sorted(f"ptx/{_stem(r)}.hpp" for r in rels),
                notice=[escape.cpp_comment_text(x) for x in generated_notice(
                    sorted({i.spec_file for i in iset.instructions}), "cpp/ptx.hpp.j2")])}


# -- calling the wrappers (the nvcc tests and the benchmark build kernels with this) ------

def wrapper_calls(ins: Instruction) -> dict[str, dict[str, Any]]:
    """{form key: how to call its wrapper}: the function, its explicit template
    arguments (in order) and the operands with their C++ types."""
    out: dict[str, dict[str, Any]] = {}
    helpers = _Helpers(ins)
    for w in ins.wrappers:
        wr = _Wrapper(ins, w, helpers)
        assert ins.targets is not None
        any_error = any_form_error(w, ins.targets, {id(f.support): f.support
                                                    for f in wr.forms}.values())
        order = [q for q in sorted(wr.free, key=lambda q: q.optional)]
        values = _Cond(ins, {}, {})
        for f in wr.forms:
            targs = [values.value(q, f.params[q.name]) for q in order]
            targs = [f"{NS}::{a}" if "::" in a else a for a in targs]
            ops = []
            for u in f.operands:
                kind = u.kind
                if kind in ("sink", "special"):
                    continue
                ctype = operand_type(str(u.type), kind, u.access, u.object)[0] \
                    if u.type and u.type != "pred" \
                    else "bool"
                if ctype == OBJECT_ADDRESS[("shared", "b32")][0]:
                    ctype = "std::uint32_t"  # converts to a shared_address
                if wr.io(u.name) == "out" and kind in ("register", "predicate"):
                    kind = "returned"
                ops.append({"name": u.name, "kind": kind, "ctype": ctype, "count": u.count,
                            "io": wr.io(u.name), "values": u.values,
                            "elements": [v for _, v in u.elements]})
            assert ins.targets is not None
            out[f.key] = {"function": f"{NS}::{wrapper_name(f, w)}",
                          "template_args": targs, "operands": ops, "opcode": f.opcode,
                          "form": f, "error": error_name(w, ins.targets, f.support.targets,
                                                         f.support.since_all),
                          "any_form_error": any_error}
    return out


__all__ = ["NS", "_Cond", "cpp_bool", "emit", "enum_name", "member_ident", "parts",
           "template_param", "tparam", "wrapper_calls"]
