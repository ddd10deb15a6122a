"""The three headers of one instruction file (``ptx/<stem>.hpp``, ``.device.hpp``,
``.forms.hpp``) and ``target.hpp``, as the views their templates render."""

from __future__ import annotations

import re
from typing import Any

from ptxgen import escape
from ptxgen.emit.cpp.wrappers.base import (
    GENERIC_ADDRESS,
    NARROW,
    OBJECT_ADDRESS,
    REG,
    _stem,
    enum_name,
    is_enum,
    member_ident,
)
from ptxgen.emit.cpp.wrappers.gating import _mask_bits, _since, any_form_error, error_name
from ptxgen.emit.cpp.wrappers.helpers import _Helpers
from ptxgen.emit.cpp.wrappers.wrapper import _check_distinct, _fence_overloads, _Wrapper
from ptxgen.emit.templates import generated_notice
from ptxgen.model.instructions import (
    Instruction,
    InstructionSet,
    Support,
    vkey,
)
from ptxgen.model.selection import selects


def header_view(iset: InstructionSet, rel: str, instrs: list[Instruction],
                select: str | None = None) -> dict[str, Any]:
    enums: list[dict[str, Any]] = []
    helpers: list[dict[str, Any]] = []
    check_helpers: list[dict[str, Any]] = []  # only in the passes that run the checks
    functions: list[dict[str, Any]] = []
    checkers: list[dict[str, str]] = []
    traits: dict[str, dict[str, Any]] = {}
    externs: dict[str, None] = {}
    family = 0  # the targets with a form of the file (in the selection)
    whole = 0  # the targets with a form of the file, selected or not
    distinct: dict[tuple[str, ...], str] = {}  # the functions' kinds of parameters so far
    structs: set[str] = set()  # the result structs so far
    for ins in instrs:
        for q in ins.qualifiers:
            if is_enum(q):
                members = [member_ident(q, v) for v in q.domain]
                enums.append({"name": enum_name(ins, q), "members": members,
                              "doc": escape.cpp_block_comment(
                                  f"{ins.name}: qualifier {q.name} ({q.text}). "
                                  f"{q.description}".strip())})
        hp = _Helpers(ins)
        for w in ins.wrappers:
            wr = _Wrapper(ins, w, hp, select)
            supports: dict[int, Support] = {}  # the distinct supports (forms share them)
            selected: dict[int, Support] = {}
            for f in wr.forms:
                sup = f.support
                supports[id(sup)] = sup
                if select is None or selects(select, f):
                    selected[id(sup)] = sup
            for sup in supports.values():
                externs[error_name(w, iset.targets, sup.targets, sup.since_all)] = None
            any_error = any_form_error(w, iset.targets, supports.values())
            externs[any_error] = None
            for sup in selected.values():
                family |= _mask_bits(iset.targets, sup.targets)
            for sup in supports.values():
                whole |= _mask_bits(iset.targets, sup.targets)
            own = 0  # the targets with a form of this wrapper (selected or not)
            for sup in supports.values():
                own |= _mask_bits(iset.targets, sup.targets)
            overloads = wr.overloads()
            if w.fences is not None:
                overloads += _fence_overloads(iset, ins, w, overloads)
            _check_distinct(ins, overloads, distinct)
            for ov in overloads:
                ov["any_form_error"] = any_error
                ov["wrapper_mask"] = own
                ov["wrapper_id"] = (ins.id, w.name)
            if overloads:
                overloads[0]["wrapper_first"] = True
                overloads[-1]["wrapper_last"] = True
            for ov in overloads:  # one result struct per function name
                if ov["result_struct"] and ov["result_struct"]["name"] in structs:
                    ov["result_struct"] = None
                elif ov["result_struct"]:
                    structs.add(ov["result_struct"]["name"])
            functions += overloads
            for ov in overloads:  # one array-operand trait per function name
                if not ov["arrays"] or ov["name"] in traits:
                    continue
                arrays = {a[0]: a for o in overloads if o["name"] == ov["name"]
                          for a in o["arrays"]}
                traits[ov["name"]] = {"name": escape.ident(ov["name"] + "_operands"),
                                      "function": ov["name"],
                                      "template": ov["qualifier_template"],
                                      "arrays": list(arrays.values())}
        fnames = {f["name"] for f in functions}
        snames = {f["result_struct"]["name"] for f in functions if f["result_struct"]}
        enames = {e["name"] for e in enums}
        clash = (fnames & enames) | (snames & (fnames | enames))
        if clash:
            raise ValueError(f"{ins.spec_file}: {ins.name}: wrapper name(s) "
                             f"{', '.join(sorted(clash))} are also the enum of a qualifier "
                             f"(instruction id + qualifier name) or a result struct")
        helpers += [h for n, h in hp.defs.items() if n in hp.visible]
        check_helpers += [h for n, h in hp.defs.items() if n not in hp.visible]
        checkers += list(hp.checkers.values())
    stem = _stem(rel)
    host_helpers = _host_helpers(helpers, list(traits.values()), functions)
    check_structs = _shared_checks(functions)
    host_functions = _host_declarations(ins, functions)
    _wrapper_guards(functions, family, host_functions)
    if select is not None and whole != family:
        _selection_refusals(host_functions, select)
    return {"statement_groups": _statement_groups(stem, functions, family),
            "host_helpers": [h for h in helpers if h["name"] in host_helpers],
            "device_helpers": [h for h in helpers if h["name"] not in host_helpers],
            "host_functions": host_functions,
            "result_structs": [f["result_struct"] for f in functions if f["result_struct"]],
            "check_helpers": check_helpers, "check_structs": check_structs,
            "guard": f"PTXGEN_PTX_{stem.upper()}_HPP",
            "enums": enums, "helpers": helpers,
            "stem": stem, "family": f"0x{family:x}ull",
            "forms_guard": f"PTXGEN_PTX_{stem.upper()}_FORMS_HPP",
            "device_guard": f"PTXGEN_PTX_{stem.upper()}_DEVICE_HPP",
            "device_notice": [escape.cpp_comment_text(x) for x in generated_notice(
                [rel, "spec/targets.yaml"], "cpp/wrapper_device.hpp.j2")],
            "has_forms": any(f["forms"] for f in functions),
            "forms_notice": [escape.cpp_comment_text(x) for x in generated_notice(
                [rel, "spec/targets.yaml"], "cpp/wrapper_forms.hpp.j2")],
            "checkers": checkers, "traits": list(traits.values()),
            "check_declarations": list({d["name"]: d for f in functions if f["objects"]
                                        for d in f["objects"]["declarations"]}.values()),
            "operand_checks": list({d["name"]: d for f in functions if f["objects"]
                                    for d in f["objects"]["operand_checks"]}.values()),
            "functions": functions, "externs": sorted(externs),
            "notice": [escape.cpp_comment_text(x) for x in generated_notice(
                [rel, "spec/targets.yaml"], "cpp/wrappers.hpp.j2")],
            "title": escape.cpp_comment_text(", ".join(i.name for i in instrs))}


def _wrapper_guards(functions: list[dict[str, Any]], family: int,
                    host_functions: list[dict[str, Any]]) -> None:
    """Each wrapper whose forms' targets are fewer than its file's: its overloads (in the
    ``.device.hpp``) and forms functions (in the ``.forms.hpp``) only where the target
    being compiled may have one of them, ``prune`` on its first and last overload (the
    mask; the other device passes get its one refusing declaration per name and operand
    count, as a pass without the file's forms does); ``forms_guard`` on each overload with
    a forms table. An sm_90a pass then reads no ``.override::global_address`` wrapper.
    The wrapper's targets count every form of it, selected or not, so that a form left out
    of a ``--select`` still fails with its selection message where the wrapper exists."""
    names: dict[tuple[str, str], set[str]] = {}  # each wrapper's function names
    for f in functions:
        names.setdefault(f["wrapper_id"], set()).add(f["name"])
    for f in functions:
        own = f["wrapper_mask"] & family
        f["prune"] = None
        f["forms_guard"] = f"0x{own:x}ull" if own != family else None
        if own == family or not (f.get("wrapper_first") or f.get("wrapper_last")):
            continue
        mine = names[f["wrapper_id"]]
        f["prune"] = {"mask": f"0x{own:x}ull", "first": bool(f.get("wrapper_first")),
                      "last": bool(f.get("wrapper_last")),
                      "generic": [d for d in host_functions if d["name"] in mine]}


_PTXGEN_NAME = re.compile(r"\bPtxgen\w+")


def _shared_checks(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``static_assert``s that every overload with the same qualifier template
    parameters makes (of one instruction: its ``_forms``/``fallback`` name it) and that
    read those parameters only: one class template per such group holds them, and each
    overload asserts its ``ok`` instead, so the device passes parse them once. Changes
    ``functions``' statements in place; returns the class templates."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in functions:
        if f["qualifier_template"]:
            groups.setdefault((f["fallback"], f["qualifier_template"]), []).append(f)
    out: list[dict[str, Any]] = []
    for (_, template), overloads in groups.items():
        if len(overloads) < 2:
            continue
        first = overloads[0]
        params = set(_PTXGEN_NAME.findall(first["qualifier_args"]))
        rest = [set(o["statements"]) for o in overloads[1:]]
        common = [st for st in first["statements"] if st.startswith("static_assert(")
                  and set(_PTXGEN_NAME.findall(st)) <= params
                  and all(st in r for r in rest)]
        if len(common) < 2:
            continue
        name = escape.ident(f"{first['name']}_checks")
        while any(c["name"] == name for c in out):
            name += "_"
        out.append({"name": name, "function": first["name"], "statements": common,
                    "template": ", ".join(p.split(" = ")[0] for p in template.split(", "))})
        shared = set(common)
        for o in overloads:
            o["statements"] = [f"static_assert(detail::{name}<{first['qualifier_args']}>::ok);",
                               *(st for st in o["statements"] if st not in shared)]
    return out


def _host_helpers(helpers: list[dict[str, Any]], traits: list[dict[str, Any]],
                  functions: list[dict[str, Any]]) -> set[str]:
    """The helpers the operand traits and the wrappers' return types use, directly or
    through another helper: the host pass sees those, so it sees these too (and no other
    helper)."""
    names = {h["name"]: h for h in helpers}
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
    todo = [" ".join(f"{ctype} {count}" for t in traits for _, ctype, count in t["arrays"]),
            " ".join(f["ret"] for f in functions)]
    found: set[str] = set()
    while todo and word is not None:
        for n in word.findall(todo.pop()):
            if n not in found:
                found.add(n)
                todo.append(" ".join(names[n]["body"]) + " " + names[n]["params"])
    return found


def _host_declarations(ins: Instruction, functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the host pass declares of the wrappers: one function template per name (and
    return type), whose operands take anything (braced lists too; those past the fewest
    of the name's overloads defaulted) and whose body only
    returns the wrapper's type. The host compiler never runs device code, and the
    device passes check every call against the real wrappers. A device pass whose
    target has no form of the file sees them too, with the wrapper's refusal that names
    every target of its forms (``any_form_error``) in the body."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for f in functions:
        key = (f["name"], len(f["params"]))
        # a return type that depends on the qualifiers needs them by name; the pack
        # takes the immediates' and arrays' parameters, if given
        tps = (f"{f['qualifier_template']}, auto... PtxgenRest"
               if "Ptxgen" in f["ret"] and f.get("qualifier_template") else "auto... PtxgenQ")
        d = out.setdefault(key, {"name": f["name"], "ret": f["ret"], "template": tps,
                                 "params": ", ".join(["detail::host_arg"] * key[1]),
                                 "refusal": f["any_form_error"],
                                 "own": f"0x{f['wrapper_mask']:x}ull",
                                 "pack": "PtxgenRest" if "PtxgenRest" in tps else "PtxgenQ",
                                 "select_msg": None,
                                 "body": "" if f["ret"] == "void" else f"return {f['ret']}{{}}; "})
        sig = _signature(f)
        if sig not in d.setdefault("signatures", []):
            d["signatures"].append(sig)
        if d["ret"] != f["ret"]:
            raise ValueError(f"{ins.spec_file}: wrapper {f['name']} with {key[1]} operands "
                             f"returns {d['ret']} in one overload and {f['ret']} in another")
    # the operand counts of one name and return type: one declaration, the operands past
    # the fewest defaulted
    merged: dict[tuple[str, ...], tuple[int, int, dict[str, Any]]] = {}
    for (name, count), d in out.items():
        same = (name, d["ret"], d["template"], d["refusal"])
        low, high, first = merged.get(same, (count, count, d))
        if first is not d:
            first["signatures"] += [s for s in d["signatures"] if s not in first["signatures"]]
        merged[same] = (min(low, count), max(high, count), first)
    return [{**d, "params": ", ".join(["detail::host_arg"] * low
                                      + ["detail::host_arg = {}"] * (high - low))}
            for low, high, d in merged.values()]


_PTXGEN_PREFIX = re.compile(r"\bPtxgen(?=[A-Z])")


def _signature(f: dict[str, Any]) -> str:
    """A wrapper overload as a user calls it, every template parameter and operand named
    (``template <int CtaGroup, tcgen05_mma_kind Kind, bool Ashift = false, ...> void
    tcgen05_mma(std::uint32_t d_tmem, ...)``): the comment above its declaration in the
    public header, whose declaration takes anything (``template <auto...>``)."""
    params = ", ".join(p.removeprefix("[[maybe_unused]] ") for p in f["params"])
    text = f"template <{f['template']}> {f['ret']} {f['name']}({params})"
    return escape.cpp_comment_text(_PTXGEN_PREFIX.sub("", text))


def _selection_refusals(host_functions: list[dict[str, Any]], select: str) -> None:
    """Headers of a ``--select``: a device pass whose target has forms of a wrapper, none
    of them selected, sees the wrapper's declaration with a ``static_assert`` that says
    so (not the refusal that names the targets of its forms, which include this one)."""
    for d in host_functions:
        d["select_msg"] = escape.cpp_message(
            f"ptxgen: {d['name']}: no form of it is in the selection these headers were "
            f"generated with (ptxgen generate --select {select}); generate them again "
            "with a pattern that selects it")


def _statement_groups(stem: str, functions: list[dict[str, Any]],
                      family: int) -> list[dict[str, Any]]:
    """The asm statements of a file's forms, one function per parameter list (the forms
    functions with the same parameters share it, and its statements); each forms table
    gets the statement of each of its forms in that function. A function whose users'
    forms are on fewer targets than the file's has their mask as its ``guard``."""
    groups: dict[str, dict[str, Any]] = {}
    for f in functions:
        t = f["forms"]
        if not t:
            continue
        g = groups.get(t["params"])
        if g is None:
            g = groups[t["params"]] = {
                "function": escape.ident(f"{stem}_asm{len(groups)}"), "params": t["params"],
                "tparams": t["statement_tparams"], "texts": {}, "slots": 0, "mask": 0}
        g["mask"] |= f["wrapper_mask"] & family
        g["slots"] = max(g["slots"], len(t["slot_texts"]))
        t["asm"] = g["function"]
        ks = [0 if x is None else g["texts"].setdefault(x, len(g["texts"]))
              for x in t["statement_texts"]]
        t["statement_width"], data = escape.packed(ks)
        t["statement_rows"] = escape.cpp_bytes(data)
    for f in functions:  # every slot of the group, "" past the form's own
        t = f["forms"]
        if t:
            n = groups[t["params"]]["slots"]
            t["text_args"] = ", ".join([f"detail::opcode_text<{t['opcode_pieces']}, "
                                        f"{t['opcodes']}, {t['opcode_width']}, PtxgenF>",
                                        *t["slot_texts"],
                                        *["detail::no_text"] * (n - len(t["slot_texts"]))])
    return [{"function": g["function"], "params": g["params"],
             "guard": f"0x{g['mask']:x}ull" if g["mask"] != family else None,
             "tparams": ", ".join(["int PtxgenK", *(f"class PtxgenT{i}"
                                                     for i in range(g["slots"] + 1)),
                                   *([g["tparams"]] if g["tparams"] else [])]),
             "statements": list(g["texts"])} for g in groups.values()]


def target_view(iset: InstructionSet) -> dict[str, Any]:
    t = iset.targets
    detect = []
    for suffix in ("a", "f", ""):
        for i, x in enumerate(t.targets):
            if x.suffix != suffix:
                continue
            arch = x.cuda_arch
            if suffix == "a":
                test = (f"(defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ == {arch}) "
                        f"|| defined(__CUDA_ARCH_FEAT_SM{x.sm}_ALL)")
            elif suffix == "f":
                test = (f"defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && "
                        f"__CUDA_ARCH_FAMILY_SPECIFIC__ == {arch}")
            else:
                test = f"__CUDA_ARCH__ == {arch}"
            detect.append({"test": test, "index": i, "name": x.name})
    # The default PTX ISA version per toolkit, newest toolkit first: the first toolkit
    # that writes each version (capped at the newest version of the spec).
    newest = vkey(t.newest)
    first: dict[tuple[int, int], tuple[int, int]] = {}
    for cuda, ptx_isa in t.toolkits:
        first.setdefault(min(vkey(ptx_isa), newest), vkey(cuda))
    toolkits = [{"cuda": c[0] * 100 + c[1], "cuda_text": f"{c[0]}.{c[1]}",
                 "ptx": v[0] * 10 + v[1], "ptx_text": f"{v[0]}.{v[1]}"}
                for v, c in sorted(first.items(), reverse=True)]
    reg_types = sorted({(code, ctype) for ctype, _, code in
                        [*REG.values(), *GENERIC_ADDRESS.values(),
                         *OBJECT_ADDRESS.values()]})
    newer = escape.ident(f"ptxgen_target_newer_than_the_spec_ptx_isa_{t.newest.replace('.', '_')}"
                         "_update_it_with_ptxgen_probe_and_generate_or_define_"
                         "PTXGEN_PTX_ALLOW_NEWER_TARGETS")
    return {"detect": detect, "targets": [x.name for x in t.targets], "reg_types": reg_types,
            "newer_name": newer, "newest_text": t.newest,
            "newest_target": max(t.targets, key=lambda x: (x.sm, x.suffix)).name,
            "toolkits": toolkits,
            # no operand fence for the 128-bit register ("q"): nothing needs one
            "fence_types": sorted({(c, k) for t, (c, k, _) in REG.items()
                                   if k != "q" and t not in NARROW}),
            "newest": _since(t.newest),
            "notice": [escape.cpp_comment_text(x) for x in generated_notice(
                ["spec/targets.yaml"], "cpp/target.hpp.j2")]}
