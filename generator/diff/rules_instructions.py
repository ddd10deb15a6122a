"""Diff rules for instructions and targets: instructions, forms, qualifiers and their
values, operands, support (target x PTX ISA version), gates, C++ wrappers; SM
targets, renames and PTX ISA versions.

Elements are matched by name: instructions by ``id``, qualifiers, operands and
wrappers by name, gates by ``id``, targets by name (a target that disappears while
the target it is renamed to appears is one ``target-renamed``, and support on the
old name carries over to the new one), forms by their opcode and operand variant.

Forms are many (thousands per instruction), so the forms that appear, disappear or
change support are reported as groups: the smallest set of conditions on qualifier
values and operand choices (``kind = mxf4nvf4``; ``block_scale = true,
scale_vectorsize = none``) such that every form of the revision that meets a
condition is in the group, and every form of the group meets one. Each group is one
change, with its form count and one example in the message and every form's opcode
in ``after`` / ``before`` (JSON), so the changelog is complete.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from ptxgen.diff.base import Location
from ptxgen.diff.engine import (
    BREAKING,
    COMPATIBLE,
    NOTE,
    Context,
    Symbol,
    comparer,
    rule,
    symbol_table,
)
from ptxgen.diff.revisions import Revision
from ptxgen.model import Spec
from ptxgen.model.instructions import FALSE, NONE, TRUE, Form, Instruction, norm, vkey
from ptxgen.model.targets import Targets

AREA = "instructions"
TARGETS = "targets"

# -- the catalogue ---------------------------------------------------------------------

INSTRUCTION_ADDED = rule(
    "instruction-added", COMPATIBLE, AREA, "An instruction is new.",
    "A new builder, wrappers and `ptxgen support` answers; nothing that exists changes.")
INSTRUCTION_REMOVED = rule(
    "instruction-removed", BREAKING, AREA, "An instruction is gone.",
    "Its builder and wrappers disappear; code that emits it no longer compiles.")
FORM_ADDED = rule(
    "form-added", COMPATIBLE, AREA,
    "Forms (qualifier and operand combinations) are new, reported as groups.",
    "New valid combinations; every form that was valid still is.")
FORM_REMOVED = rule(
    "form-removed", BREAKING, AREA,
    "Forms are no longer valid, reported as groups.",
    "The builder refuses them and the wrappers fail with a static_assert.")
QUALIFIER_ADDED = rule(
    "qualifier-added", COMPATIBLE, AREA, "An instruction has a new qualifier.",
    "A new keyword argument / template parameter with a default; forms without it keep "
    "their spelling (a new required qualifier also removes forms: form-removed).")
QUALIFIER_REMOVED = rule(
    "qualifier-removed", BREAKING, AREA, "A qualifier of an instruction is gone.",
    "Its keyword argument, template parameter and enum disappear.")
QUALIFIER_VALUE_ADDED = rule(
    "qualifier-value-added", COMPATIBLE, AREA, "A qualifier takes a new value.",
    "A new enum member and builder spelling; every value that was allowed still is.")
QUALIFIER_VALUE_REMOVED = rule(
    "qualifier-value-removed", BREAKING, AREA, "A qualifier value is gone.",
    "Its enum member and builder spelling disappear.")
OPERAND_ADDED = rule(
    "operand-added", COMPATIBLE, AREA,
    "An operand or operand alternative is new, and no existing form needs it.",
    "Only new forms (or callers who opt in) pass it; existing calls are unchanged.")
OPERAND_ADDED_REQUIRED = rule(
    "operand-added-required", BREAKING, AREA,
    "Forms that exist in both revisions take an operand they did not take.",
    "Every existing call of those forms lacks an argument.")
OPERAND_REMOVED = rule(
    "operand-removed", BREAKING, AREA,
    "An operand or operand alternative is gone, or forms no longer take it.",
    "Calls that pass it no longer compile or are refused.")
OPERAND_RETYPED = rule(
    "operand-retyped", BREAKING, AREA,
    "An operand of existing forms has another kind, register type, count or immediate "
    "values.",
    "Calls written for the old operand pass the wrong registers or values.")
SUPPORT_WIDENED = rule(
    "support-widened", COMPATIBLE, AREA,
    "Forms are supported on more of the old side's targets, or from an earlier PTX ISA "
    "version (a new target is reported once, by target-added, with the forms it takes).",
    "Everything that assembled still does.")
SUPPORT_NARROWED = rule(
    "support-narrowed", BREAKING, AREA,
    "Forms are supported on fewer targets, or only from a later PTX ISA version.",
    "Code built for those targets or versions stops assembling (the wrappers fail to "
    "link, the builders' support answers change).")
GATE_VERSION_CHANGED = rule(
    "gate-version-changed", NOTE, AREA, "A gate's PTX ISA version changed.",
    "The forms it affects are reported by support-widened / support-narrowed; this "
    "points at the cause.")
GATE_TARGETS_CHANGED = rule(
    "gate-targets-changed", NOTE, AREA, "A gate's target selectors changed.",
    "The forms it affects are reported by support-widened / support-narrowed; this "
    "points at the cause.")
WRAPPER_ADDED = rule(
    "wrapper-added", COMPATIBLE, AREA, "A C++ wrapper (group of forms) is new.",
    "A new function template; nothing that exists changes.")
WRAPPER_REMOVED = rule(
    "wrapper-removed", BREAKING, AREA, "A C++ wrapper is gone.",
    "Code that calls it no longer compiles.")
SPELLING_ADDED = rule(
    "spelling-added", COMPATIBLE, AREA,
    "An instruction's qualifiers are read in more written orders, or it has a new alias "
    "name (spec `spelling:` / `alias_names:`).",
    "support and the builders accept more texts; every text read before still is.")
SPELLING_REMOVED = rule(
    "spelling-removed", BREAKING, AREA,
    "Written orders or an alias name an instruction was read in are no longer read.",
    "Text written in those orders or under that name (support, lint, builders) is "
    "refused; text in the ISA's order is unaffected.")
SPELLING_CHANGED = rule(
    "spelling-changed", NOTE, AREA,
    "The written orders an instruction is read in changed (head tokens, fixed or "
    "ordered qualifiers).",
    "Some other orders may be read or refused now; the ISA's order is unaffected.")
TARGET_ADDED = rule(
    "target-added", COMPATIBLE, TARGETS,
    "An SM target is new; the message counts the forms and instructions it takes.",
    "A new `--target` / `.target` name; nothing that exists changes.")
TARGET_REMOVED = rule(
    "target-removed", BREAKING, TARGETS, "An SM target is gone.",
    "Builds and support queries for it fail.")
TARGET_RENAMED = rule(
    "target-renamed", BREAKING, TARGETS,
    "An SM target has a new name (one change, not a removal and an addition).",
    "The old name is refused from the version of the rename; support carries over to "
    "the new name.")
PTX_ISA_VERSION_ADDED = rule(
    "ptx-isa-version-added", COMPATIBLE, TARGETS, "A PTX ISA version is new.",
    "A new `--ptx-isa` / `.version`; nothing that exists changes.")
PTX_ISA_VERSION_REMOVED = rule(
    "ptx-isa-version-removed", BREAKING, TARGETS, "A PTX ISA version is gone.",
    "Builds and support queries for it fail.")


# -- locations ------------------------------------------------------------------------------

class _Where:
    """Locations of instruction and target elements in one revision (by data path).

    A view (``--ptx-isa``) is located in the spec's own files, which also hold what the
    view does not have: only elements of the revision's model are looked up there."""

    def __init__(self, side: Revision) -> None:
        self.side = side
        self.index: dict[str, tuple[str, int]] = {}
        self.targets_rel: str | None = None
        self.view = side.ptx_isa is not None
        self.model = _instructions(side)
        for rel, doc in side.docs.items():
            data = doc.data
            if not isinstance(data, Mapping):
                continue
            if "ptx_isa_versions" in data and "targets" in data:
                self.targets_rel = rel
            for i, raw in enumerate(data.get("instructions", ()) or ()):
                if isinstance(raw, Mapping) and "id" in raw and (
                        not self.view or raw["id"] in self.model):
                    self.index[raw["id"]] = (rel, i)

    def _has(self, ins_id: str, what: str, name: str) -> bool:
        """Whether the revision's instruction has the element (always outside a view)."""
        if not self.view:
            return True
        ins = self.model[ins_id]
        names: Iterable[str]
        if what == "qualifiers":
            names = (q.name for q in ins.qualifiers)
        elif what == "operands":
            names = itertools.chain((o.name for o in ins.operands),
                                    (a.name for o in ins.operands for a in o.choice))
        elif what == "gates":
            names = (g.id for g in ins.gates)
        elif what == "combinations":
            names = (c.id for c in ins.combinations)
        else:
            names = (w.name for w in ins.wrappers)
        return name in names

    def raw(self, ins_id: str) -> Mapping[str, Any]:
        rel, i = self.index[ins_id]
        node: Mapping[str, Any] = self.side.docs[rel].data["instructions"][i]
        return node

    def instruction(self, ins_id: str, *sub: str | int) -> Location | None:
        if ins_id not in self.index:
            return None
        rel, i = self.index[ins_id]
        return self.side.at(rel, ("instructions", i) + sub)

    def _find(self, ins_id: str, key: str, name: str, field: str = "name") -> int | None:
        if not self._has(ins_id, key, name):
            return None
        for j, item in enumerate(self.raw(ins_id).get(key, ()) or ()):
            if isinstance(item, Mapping) and item.get(field) == name:
                return j
        return None

    def qualifier(self, ins_id: str, name: str, value: str | None = None) -> Location | None:
        if ins_id not in self.index:
            return None
        j = self._find(ins_id, "qualifiers", name)
        if j is None:
            return self.instruction(ins_id)
        if value is not None:
            vals = self.raw(ins_id)["qualifiers"][j].get("values")
            if isinstance(vals, list) and (
                    not self.view or value in self.model[ins_id].qualifier(name).values):
                for k, v in enumerate(vals):
                    if norm(v) == value:
                        return self.instruction(ins_id, "qualifiers", j, "values", k)
            return self.instruction(ins_id, "qualifiers", j, "values")
        return self.instruction(ins_id, "qualifiers", j)

    def operand(self, ins_id: str, name: str) -> Location | None:
        if ins_id not in self.index:
            return None
        if self._has(ins_id, "operands", name):
            for j, o in enumerate(self.raw(ins_id).get("operands", ())):
                if o.get("name") == name:
                    return self.instruction(ins_id, "operands", j)
                for k, a in enumerate(o.get("choice", ()) or ()):
                    if a.get("name") == name:
                        return self.instruction(ins_id, "operands", j, "choice", k)
        return self.instruction(ins_id)

    def gate(self, ins_id: str, gate_id: str) -> Location | None:
        if ins_id not in self.index:
            return None
        j = self._find(ins_id, "gates", gate_id, "id")
        if j is not None:
            return self.instruction(ins_id, "gates", j)
        j = self._find(ins_id, "combinations", gate_id, "id")
        if j is not None:
            return self.instruction(ins_id, "combinations", j)
        return self.instruction(ins_id)

    def wrapper(self, ins_id: str, name: str) -> Location | None:
        if ins_id not in self.index:
            return None
        j = self._find(ins_id, "wrappers", name)
        return self.instruction(ins_id, "wrappers", j) if j is not None else \
            self.instruction(ins_id)

    def target(self, name: str) -> Location | None:
        if self.targets_rel is None:
            return None
        targets = _targets(self.side)
        if self.view and (targets is None or name not in targets.by_name):
            return None
        for j, t in enumerate(self.side.docs[self.targets_rel].data.get("targets", ())):
            if t.get("name") == name:
                return self.side.at(self.targets_rel, ("targets", j))
        return None

    def rename(self, sm: int) -> Location | None:
        if self.targets_rel is None or self.view:  # as of one version, no target is renamed
            return None
        for j, r in enumerate(self.side.docs[self.targets_rel].data.get("renames", ())):
            if r.get("from") == sm:
                return self.side.at(self.targets_rel, ("renames", j))
        return None

    def version(self, v: str) -> Location | None:
        if self.targets_rel is None:
            return None
        targets = _targets(self.side)
        versions = self.side.docs[self.targets_rel].data.get("ptx_isa_versions", [])
        if not self.view or (targets is not None and v in targets.versions):
            for j, x in enumerate(versions):
                if str(x) == v:
                    return self.side.at(self.targets_rel, ("ptx_isa_versions", j))
        return self.side.at(self.targets_rel, ("ptx_isa_versions",))


# -- forms and groups of forms ----------------------------------------------------------------

FormId = tuple[str, tuple[tuple[str, str], ...]]


def identity(f: Form) -> FormId:
    """What makes a form the same form in two revisions: its opcode and the operands
    it takes (choices and optional operands that are on). Kept with the form."""
    hit: FormId | None = f.__dict__.get("_diff_identity")
    if hit is None:
        hit = f.__dict__["_diff_identity"] = (
            f.opcode, tuple(sorted((n, v) for n, v in f.variant if v != FALSE)))
    return hit


Cube = tuple[tuple[str, str], ...]
ALL: Cube = (("*", "*"),)  # every form (of the revision, or of both revisions)
_MAX_ITEMS = 4
_MAX_WORK = 1_500_000  # (forms x conditions) counted per level at most


def groups(selected: Sequence[Form], universe: Sequence[Form],
           names: Sequence[str]) -> list[tuple[Cube, list[Form]]]:
    """Describe ``selected`` (a subset of ``universe``) as conditions.

    Each condition (a cube: qualifier / operand-choice values, at most three) selects
    only forms of ``selected`` among ``universe``; together they select all of it.
    Forms no such condition describes come back one by one (a cube of every name).
    """
    chosen = {identity(f) for f in selected}
    if chosen >= {identity(f) for f in universe}:
        return [(ALL, list(selected))]
    uncovered: dict[FormId, Form] = {identity(f): f for f in selected}
    out: list[tuple[Cube, list[Form]]] = []
    rows: list[tuple[bool, tuple[str, ...]]] | None = None
    for k in range(1, _MAX_ITEMS + 1):
        if not uncovered or k > len(names):
            break
        combos = list(itertools.combinations(range(len(names)), k))
        if k > 1 and len(combos) * len(universe) > _MAX_WORK:
            break
        if rows is None:  # the values of ``names`` in each form of the universe, once
            rows = [(identity(f) in chosen, tuple(f.params[n] for n in names))
                    for f in universe]
        # A cube is counted as (combination index, its values): the same counts as
        # counting the cubes themselves, without building each cube per form.
        getters = list(enumerate(itemgetter(*c) for c in combos))
        wanted: dict[tuple[int, Any], int] = {}
        for f in uncovered.values():
            vals = tuple(f.params[n] for n in names)
            for j, get in getters:
                key = (j, get(vals))
                wanted[key] = wanted.get(key, 0) + 1
        in_all: dict[tuple[int, Any], int] = {}
        in_sel: dict[tuple[int, Any], int] = {}
        for sel, vals in rows:
            for j, get in getters:
                key = (j, get(vals))
                if key in wanted:
                    in_all[key] = in_all.get(key, 0) + 1
                    if sel:
                        in_sel[key] = in_sel.get(key, 0) + 1
        counts: dict[Cube, int] = {}
        for (j, got), n in wanted.items():
            if in_all.get((j, got), 0) == in_sel.get((j, got), 0):
                counts[tuple(zip([names[i] for i in combos[j]],
                                 got if k > 1 else (got,), strict=True))] = n
        valid = sorted(counts, key=lambda c: (-counts[c], c))
        for cube in valid:
            hit = [i for i, f in uncovered.items() if _meets(f, cube)]
            if not hit:
                continue
            out.append((cube, [f for f in selected if _meets(f, cube)]))
            for i in hit:
                del uncovered[i]
    for f in uncovered.values():
        out.append(((), [f]))  # described by itself
    return out


def _meets(f: Form, cube: Cube) -> bool:
    return all(f.params.get(n) == v for n, v in cube)


def cube_text(cube: Cube, members: Sequence[Form] = ()) -> str:
    """``kind = mxf4nvf4, block_scale = true``; a form no condition describes is named
    by its opcode and operands."""
    if cube == ALL:
        return "all forms"
    if not cube and members:
        return members[0].key
    return ", ".join(f"{n} = {v}" for n, v in cube)


def _forms_text(forms: Sequence[Form]) -> str:
    n = len(forms)
    return f"{n} form{'s' if n != 1 else ''}, e.g. {forms[0].key}" if n > 1 else forms[0].key


# -- comparing ---------------------------------------------------------------------------------

def _instructions(side: Revision) -> dict[str, Instruction]:
    iset = side.spec.instructions
    return {i.id: i for i in iset.instructions} if iset else {}


def _targets(side: Revision) -> Targets | None:
    iset = side.spec.instructions
    return iset.targets if iset else None


def renames(ctx: Context) -> dict[str, str]:
    """{name: other name} of every rename either whole spec knows, both ways (OLD may
    be the later version: then sm_110a is called sm_101a in NEW)."""
    out: dict[str, str] = {}
    back: dict[str, str] = {}
    for side in (ctx.old, ctx.new):
        iset = side.whole.instructions
        if iset is None:
            continue
        for t in iset.targets.targets:
            if t.renamed_to is not None:
                out[t.name] = t.renamed_to
                back[t.renamed_to] = t.name
    return {**back, **out}


@comparer(AREA)
def compare_instructions(ctx: Context) -> None:
    old, new = _instructions(ctx.old), _instructions(ctx.new)
    wo, wn = _Where(ctx.old), _Where(ctx.new)
    for iid in [i for i in old if i not in new]:  # in spec order (a set's is random)
        i = old[iid]
        ctx.report(INSTRUCTION_REMOVED, iid, f"instruction {i.name} removed "
                   f"({_count(len(i.forms))}; builder ptx.{iid})", old=wo.instruction(iid),
                   before=i.name)
    for iid in sorted(new.keys() - old.keys(), key=list(new).index):
        i = new[iid]
        ctx.report(INSTRUCTION_ADDED, iid, f"new instruction {i.name}: {i.title} "
                   f"({_count(len(i.forms))}; builder ptx.{iid})", new=wn.instruction(iid),
                   after=i.name)
    rmap = renames(ctx)
    both_whole = ctx.old.ptx_isa is None and ctx.new.ptx_isa is None
    for iid in [i for i in new if i in old]:
        _InstructionDiff(ctx, old[iid], new[iid], wo, wn, rmap).run(gates=both_whole)


class _InstructionDiff:
    def __init__(self, ctx: Context, a: Instruction, b: Instruction, wo: _Where, wn: _Where,
                 rmap: Mapping[str, str]) -> None:
        self.ctx, self.a, self.b, self.wo, self.wn, self.rmap = ctx, a, b, wo, wn, rmap
        self.id = b.id
        self.fa = {identity(f): f for f in a.forms}
        self.fb = {identity(f): f for f in b.forms}

    def run(self, *, gates: bool) -> None:
        self.qualifiers()
        self.operands()
        self.forms()
        self.support()
        self.wrappers()
        self.spellings()
        if gates:
            self.gates()

    # -- qualifiers -------------------------------------------------------------------
    def qualifiers(self) -> None:
        qa = {q.name: q for q in self.a.qualifiers}
        qb = {q.name: q for q in self.b.qualifiers}
        for name, q in qa.items():
            if name not in qb:
                self.ctx.report(QUALIFIER_REMOVED, f"{self.id}.{name}",
                                f"{self.a.name}: qualifier {name} ({q.text}) removed",
                                old=self.wo.qualifier(self.id, name),
                                new=self.wn.instruction(self.id), before=q.text)
        for name, q in qb.items():
            if name not in qa:
                what = "flag" if q.flag else f"values {', '.join(q.values)}"
                self.ctx.report(QUALIFIER_ADDED, f"{self.id}.{name}",
                                f"{self.b.name}: new qualifier {name} ({q.text}; {what})",
                                old=self.wo.instruction(self.id),
                                new=self.wn.qualifier(self.id, name), after=q.text)
                continue
            p = qa.get(name)
            if p is None or q.flag or p.flag:
                continue
            for v in p.values:
                if v not in q.values:
                    self.ctx.report(QUALIFIER_VALUE_REMOVED, f"{self.id}.{name}.{v}",
                                    f"{self.a.name}: {p.render(v)} removed (qualifier {name})",
                                    old=self.wo.qualifier(self.id, name, v),
                                    new=self.wn.qualifier(self.id, name), before=v)
            for v in q.values:
                if v not in p.values:
                    self.ctx.report(QUALIFIER_VALUE_ADDED, f"{self.id}.{name}.{v}",
                                    f"{self.b.name}: new {q.render(v)} (qualifier {name})",
                                    old=self.wo.qualifier(self.id, name),
                                    new=self.wn.qualifier(self.id, name, v), after=v)

    # -- operands ---------------------------------------------------------------------
    @staticmethod
    def _declared(ins: Instruction) -> dict[str, str]:
        out: dict[str, str] = {}
        for o in ins.operands:
            if o.choice:
                for alt in o.choice:
                    out[alt.name] = f"{alt.kind} {alt.type}" if alt.type else alt.kind
            else:
                out[o.name] = f"{o.kind} {o.type}" if o.type and not isinstance(
                    o.type, dict) else o.kind
        return out

    def _same_operand_specs(self) -> bool:
        """Whether both revisions write the operands (and the combinations' operand
        counts) identically: then every form of both takes the same operands."""
        try:
            ra, rb = self.wo.raw(self.id), self.wn.raw(self.id)
        except KeyError:
            return False
        return bool(ra.get("operands") == rb.get("operands") and
                    [c.get("operands") for c in ra.get("combinations", ())] ==
                    [c.get("operands") for c in rb.get("combinations", ())])

    def operands(self) -> None:
        da, db = self._declared(self.a), self._declared(self.b)
        common = [k for k in self.fb if k in self.fa]
        required: dict[str, list[Form]] = {}
        dropped: dict[str, list[Form]] = {}
        retyped: dict[tuple[str, str, str], list[Form]] = {}
        if self._same_operand_specs():
            common = []  # nothing to compare form by form
        for k in common:
            ua = {u.name: u for u in self.fa[k].operands}
            ub = {u.name: u for u in self.fb[k].operands}
            for n in [n for n in ub if n not in ua]:  # in operand order (a set's is random)
                required.setdefault(n, []).append(self.fb[k])
            for n in [n for n in ua if n not in ub]:
                dropped.setdefault(n, []).append(self.fb[k])
            for n in [n for n in ua if n in ub]:
                x, y = _use_text(ua[n]), _use_text(ub[n])
                if x != y:
                    retyped.setdefault((n, x, y), []).append(self.fb[k])
        for n in [n for n in da if n not in db]:
            self.ctx.report(OPERAND_REMOVED, f"{self.id}.operands.{n}",
                            f"{self.a.name}: operand {n} ({da[n]}) removed",
                            old=self.wo.operand(self.id, n), new=self.wn.instruction(self.id),
                            before=n)
        for n in [n for n in db if n not in da]:
            if n in required:
                continue
            self.ctx.report(OPERAND_ADDED, f"{self.id}.operands.{n}",
                            f"{self.b.name}: new operand {n} ({db[n]})",
                            old=self.wo.instruction(self.id), new=self.wn.operand(self.id, n),
                            after=n)
        universe = [self.fb[k] for k in common]
        names = self.b.param_names
        for n, forms in required.items():
            for cube, members in groups(forms, universe, names):
                self.ctx.report(OPERAND_ADDED_REQUIRED, f"{self.id}.operands.{n}",
                                f"{self.b.name}: {_with(cube, members)} now take operand {n} "
                                f"({_forms_text(members)})",
                                old=self.wo.instruction(self.id),
                                new=self.wn.operand(self.id, n),
                                after=[f.key for f in members])
        for n, forms in dropped.items():
            if n not in db:
                continue  # reported above as the operand's removal
            for cube, members in groups(forms, universe, names):
                self.ctx.report(OPERAND_REMOVED, f"{self.id}.operands.{n}",
                                f"{self.b.name}: {_with(cube, members)} no longer take operand {n} "
                                f"({_forms_text(members)})",
                                old=self.wo.operand(self.id, n),
                                new=self.wn.operand(self.id, n),
                                before=[f.key for f in members])
        for (n, x, y), forms in retyped.items():
            for cube, members in groups(forms, universe, names):
                self.ctx.report(OPERAND_RETYPED, f"{self.id}.operands.{n}",
                                f"{self.b.name}: operand {n}: {x} -> {y} in "
                                f"{_with(cube, members)} ({_forms_text(members)})",
                                old=self.wo.operand(self.id, n),
                                new=self.wn.operand(self.id, n), before=x, after=y)

    # -- forms ------------------------------------------------------------------------
    def _group_loc(self, where: _Where, cube: Cube) -> Location | None:
        """The element a group of forms is about: its first value, else the instruction."""
        quals = {q.name for q in self.b.qualifiers} | {q.name for q in self.a.qualifiers}
        for n, v in cube:
            if v in (FALSE, NONE):
                continue
            if n in quals:
                return where.qualifier(self.id, n, None if v == TRUE else v)
            if n != "*":  # an operand choice, or an optional operand that is given
                return where.operand(self.id, n if v == TRUE else v)
        return where.instruction(self.id)

    def forms(self) -> None:
        removed = [f for k, f in self.fa.items() if k not in self.fb]
        added = [f for k, f in self.fb.items() if k not in self.fa]
        if removed:
            for cube, members in groups(removed, self.a.forms, self.a.param_names):
                what = cube_text(cube, members)
                self.ctx.report(FORM_REMOVED, f"{self.id}.forms[{_key(cube, members)}]",
                                f"{self.a.name}: {what}: {_forms_text(members)} no longer "
                                "valid",
                                old=self._group_loc(self.wo, cube),
                                new=self.wn.instruction(self.id),
                                before=[f.key for f in members])
        if added:
            for cube, members in groups(added, self.b.forms, self.b.param_names):
                what = cube_text(cube, members)
                self.ctx.report(FORM_ADDED, f"{self.id}.forms[{_key(cube, members)}]",
                                f"{self.b.name}: {what}: new {_forms_text(members)}",
                                old=self.wo.instruction(self.id),
                                new=self._group_loc(self.wn, cube),
                                after=[f.key for f in members])

    # -- support ----------------------------------------------------------------------
    def support(self) -> None:
        ta, tb = self.a.targets, self.b.targets
        if ta is None or tb is None:
            return
        wider: dict[tuple[Any, ...], list[Form]] = {}
        narrower: dict[tuple[Any, ...], list[Form]] = {}
        common = [k for k in self.fb if k in self.fa]
        def renamed(t: str) -> str:
            """The name of old target ``t`` in NEW (itself, unless renamed in between)."""
            to = self.rmap.get(t)
            return to if to is not None and to in tb.by_name and t not in tb.by_name else t

        # a target that OLD does not have (under any name) is reported once, by
        # target-added with the number of forms it takes, not as a widening of each form
        known = {renamed(t) for t in ta.by_name}
        for k in common:
            ma = {renamed(t): (t, v) for t, v in self.fa[k].support.matrix(ta).items()}
            mb = self.fb[k].support.matrix(tb)
            gained = tuple((t, v) for t, v in mb.items() if t not in ma and t in known)
            lost = tuple(t for t in ma if t not in mb)
            earlier: list[tuple[str, str, str]] = []
            later: list[tuple[str, str, str]] = []
            for t, v in mb.items():
                if t in ma and ma[t][0] == t and ma[t][1] != v:
                    (earlier if vkey(v) < vkey(ma[t][1]) else later).append((t, ma[t][1], v))
            if gained or earlier:
                wider.setdefault((gained, tuple(earlier)), []).append(self.fb[k])
            if lost or later:
                narrower.setdefault((lost, tuple(later)), []).append(self.fb[k])
        universe = [self.fb[k] for k in common]
        names = self.b.param_names
        for (gained, earlier), forms in wider.items():
            parts = [f"now also on {', '.join(f'{t} (from {v})' for t, v in gained)}"] \
                if gained else []
            parts += [f"on {t} from {v} (was {w})" for t, w, v in earlier]
            for cube, members in groups(forms, universe, names):
                what = cube_text(cube, members)
                self.ctx.report(SUPPORT_WIDENED, f"{self.id}.forms[{_key(cube, members)}]",
                                f"{self.b.name}: {what} ({_forms_text(members)}): "
                                + "; ".join(parts),
                                old=self._gate_loc(self.wo, self.fa[identity(members[0])]),
                                new=self._gate_loc(self.wn, members[0]),
                                before=None, after=[f.key for f in members])
        for (lost, later), forms in narrower.items():
            parts = [f"no longer on {', '.join(lost)}"] if lost else []
            parts += [f"on {t} only from {v} (was {w})" for t, w, v in later]
            for cube, members in groups(forms, universe, names):
                what = cube_text(cube, members)
                self.ctx.report(SUPPORT_NARROWED, f"{self.id}.forms[{_key(cube, members)}]",
                                f"{self.b.name}: {what} ({_forms_text(members)}): "
                                + "; ".join(parts),
                                old=self._gate_loc(self.wo, self.fa[identity(members[0])]),
                                new=self._gate_loc(self.wn, members[0]),
                                before=[f.key for f in members], after=None)

    def _gate_loc(self, where: _Where, f: Form) -> Location | None:
        gates = f.support.gates
        return where.gate(self.id, gates[0]) if gates else where.instruction(self.id)

    def gates(self) -> None:
        def table(ins: Instruction) -> dict[str, tuple[str | None, tuple[str, ...]]]:
            out = {g.id: (g.since, g.selectors) for g in ins.gates}
            out.update({c.id: (c.gate.since, c.gate.selectors) for c in ins.combinations
                        if c.gate is not None})
            return out

        ga, gb = table(self.a), table(self.b)
        for gid in [g for g in gb if g in ga]:
            (sa, xa), (sb, xb) = ga[gid], gb[gid]
            where = (self.wo.gate(self.id, gid), self.wn.gate(self.id, gid))
            if sa != sb:
                self.ctx.report(GATE_VERSION_CHANGED, f"{self.id}.gates.{gid}",
                                f"{self.b.name}: gate {gid}: PTX ISA {sa or 'any'} -> "
                                f"{sb or 'any'}", old=where[0], new=where[1], before=sa,
                                after=sb)
            if xa != xb:
                self.ctx.report(GATE_TARGETS_CHANGED, f"{self.id}.gates.{gid}",
                                f"{self.b.name}: gate {gid}: targets "
                                f"{', '.join(xa) or 'all'} -> {', '.join(xb) or 'all'}",
                                old=where[0], new=where[1], before=list(xa), after=list(xb))

    # -- wrappers ---------------------------------------------------------------------
    def wrappers(self) -> None:
        wa = {w.name for w in self.a.wrappers}
        wb = {w.name for w in self.b.wrappers}
        for w in self.a.wrappers:
            if w.name not in wb:
                self.ctx.report(WRAPPER_REMOVED, f"{self.id}.wrappers.{w.name}",
                                f"{self.a.name}: C++ wrapper ptxgen::ptx::{w.name} removed",
                                old=self.wo.wrapper(self.id, w.name),
                                new=self.wn.instruction(self.id), before=w.name)
        for w in self.b.wrappers:
            if w.name not in wa:
                n = sum(1 for f in self.b.forms if w.when(f.params))
                self.ctx.report(WRAPPER_ADDED, f"{self.id}.wrappers.{w.name}",
                                f"{self.b.name}: new C++ wrapper ptxgen::ptx::{w.name} "
                                f"({_count(n)})", old=self.wo.instruction(self.id),
                                new=self.wn.wrapper(self.id, w.name), after=w.name)


    # -- spellings --------------------------------------------------------------------
    def spellings(self) -> None:
        sa, sb = self.a.spelling, self.b.spelling
        key, name = f"{self.id}.spelling", self.b.name
        if sa is None and sb is not None:
            self.ctx.report(SPELLING_ADDED, key, f"{name}: qualifiers read in other orders "
                            f"(the first {sb.head} token(s) stay)",
                            old=self.wo.instruction(self.id),
                            new=self.wn.instruction(self.id, "spelling"), after=_spelling(sb))
        elif sa is not None and sb is None:
            self.ctx.report(SPELLING_REMOVED, key, f"{name}: qualifiers read in the ISA's "
                            "order only", old=self.wo.instruction(self.id, "spelling"),
                            new=self.wn.instruction(self.id), before=_spelling(sa))
        elif sa is not None and sb is not None and _spelling(sa) != _spelling(sb):
            self.ctx.report(SPELLING_CHANGED, key, f"{name}: the orders read changed",
                            old=self.wo.instruction(self.id, "spelling"),
                            new=self.wn.instruction(self.id, "spelling"),
                            before=_spelling(sa), after=_spelling(sb))
        na = {x.name: x for x in self.a.alias_names}
        nb = {x.name: x for x in self.b.alias_names}
        for n in na.keys() - nb.keys():
            self.ctx.report(SPELLING_REMOVED, f"{self.id}.alias_names.{n}",
                            f"{name}: the alias name {n} is no longer read",
                            old=self.wo.instruction(self.id, "alias_names"),
                            new=self.wn.instruction(self.id), before=n)
        for n in nb.keys() - na.keys():
            self.ctx.report(SPELLING_ADDED, f"{self.id}.alias_names.{n}",
                            f"{name}: new alias name {n} (for {nb[n].replaces})",
                            old=self.wo.instruction(self.id),
                            new=self.wn.instruction(self.id, "alias_names"), after=n)


def _spelling(sp: Any) -> dict[str, Any]:
    return {"head": sp.head, "fixed": sorted(q for q, _ in sp.fixed),
            "ordered": [list(g) for g in sp.ordered], "loose": list(sp.loose)}


def _use_text(u: Any) -> str:
    text = str(u.kind) + (f" .{u.type}" if u.type else "")
    if u.count is not None:
        text += f" x{u.count}"
    if u.values is not None:
        vals = u.values
        if isinstance(vals, tuple) and vals[:1] == ("range",):
            text += f" values {vals[1]}.."
        else:
            text += " values " + ",".join(str(v) for v in vals)
    if u.elements:
        text += " {" + "; ".join(f"{n}: {v}" for n, v in u.elements) + "}"
    return text


# -- targets and versions ----------------------------------------------------------------

@comparer(TARGETS)
def compare_targets(ctx: Context) -> None:
    ta, tb = _targets(ctx.old), _targets(ctx.new)
    if ta is None and tb is None:
        return
    wo, wn = _Where(ctx.old), _Where(ctx.new)
    va = ta.versions if ta else ()
    vb = tb.versions if tb else ()
    for v in va:
        if v not in vb:
            ctx.report(PTX_ISA_VERSION_REMOVED, f"targets.ptx_isa_versions.{v}",
                       f"PTX ISA {v} removed", old=wo.version(v), new=wn.version(v),
                       before=v)
    for v in vb:
        if v not in va:
            ctx.report(PTX_ISA_VERSION_ADDED, f"targets.ptx_isa_versions.{v}",
                       f"new PTX ISA version {v}", old=wo.version(v), new=wn.version(v),
                       after=v)
    a = ta.by_name if ta else {}
    b = tb.by_name if tb else {}
    rmap = renames(ctx)
    consumed: set[str] = set()
    for name, t in a.items():
        to = rmap.get(name)
        if name not in b:
            if to is not None and to in b and to not in a:
                consumed.add(to)
                when = _rename_version(ctx, name)
                ctx.report(TARGET_RENAMED, f"targets.{name}",
                           f"{name} renamed {to}" + (f" (from PTX ISA {when})" if when else ""),
                           old=wo.target(name), new=wn.target(to), before=name, after=to)
            else:
                ctx.report(TARGET_REMOVED, f"targets.{name}", f"target {name} removed",
                           old=wo.target(name), new=None, before=name)
        elif t.renamed_to is None and b[name].renamed_to is not None:
            to = b[name].renamed_to
            assert to is not None
            if to not in a:
                consumed.add(to)
            ctx.report(TARGET_RENAMED, f"targets.{name}",
                       f"{name} renamed {to} from PTX ISA {b[name].until}",
                       old=wo.target(name), new=wn.rename(b[name].sm) or wn.target(name),
                       before=name, after=to)
    for name, t in b.items():
        if name in a or name in consumed:
            continue
        history = ""
        earlier = [o for o, n in rmap.items() if n == name and tb is not None
                   and name in tb.by_name and (o not in tb.by_name or
                                               tb.get(o).renamed_to == name)]
        if earlier:
            history = f"; called {earlier[0]} before"
        ctx.report(TARGET_ADDED, f"targets.{name}",
                   f"new target {name} (exists from PTX ISA {t.since}{history})"
                   + _forms_on(ctx.new, name), old=None, new=wn.target(name), after=name)


def _forms_on(side: Revision, target: str) -> str:
    """How many forms of how many instructions ``side`` supports on ``target``."""
    iset = side.spec.instructions
    if iset is None:
        return ""
    per = [sum(1 for f in i.forms if target in f.support.matrix(iset.targets))
           for i in iset.instructions]
    forms, instructions = sum(per), sum(1 for n in per if n)
    return f": {_count(forms)} of {instructions} instruction{'s' * (instructions != 1)}"


def _rename_version(ctx: Context, name: str) -> str | None:
    for side in (ctx.new, ctx.old):
        iset = side.whole.instructions
        if iset and name in iset.targets.by_name and iset.targets.get(name).until:
            return iset.targets.get(name).until
    return None


# -- generated symbols ---------------------------------------------------------------------

@symbol_table(AREA)
def instruction_symbols(spec: Spec) -> Iterator[Symbol]:
    """The public names the instruction emitters generate: the Python builder of each
    instruction (``ptxgen.isa.ptx``) with its keyword arguments, the C++ enums of its
    valued qualifiers and the C++ wrapper functions (``ptxgen::ptx``)."""
    iset = spec.instructions
    if iset is None:
        return
    for ins in iset.instructions:
        yield from _instruction_symbols(ins)


def _member(q: Any, value: str) -> str:
    try:
        from ptxgen.emit.cpp.wrappers import member_ident

        return str(member_ident(q, value))
    except ImportError:  # pragma: no cover - the emitter defines it
        return value


def _instruction_symbols(ins: Instruction) -> Iterator[Symbol]:
    stem = ins.spec_file.rsplit("/", 1)[-1].removesuffix(".yaml")
    py_files = ("python/ptx.py",)
    cpp_files = (f"include/ptxgen/ptx/{stem}.hpp",)
    mod = "ptxgen.isa.ptx"
    yield Symbol(f"ptx.{ins.id}", f"{mod}.{ins.id}", "n/a",
                 f"builder of {ins.name}: {_count(len(ins.forms))}; keyword arguments "
                 + ", ".join(ins.param_names), py_files)
    for q in ins.qualifiers:
        dom = "True / False" if q.flag else ", ".join(q.domain)
        enum = not q.flag and not q.numeric
        cpp = f"ptxgen::ptx::{ins.id}_{q.name}" if enum else "n/a"
        yield Symbol(f"ptx.{ins.id}.{q.name}", f"{mod}.{ins.id}({q.name}=...)", cpp,
                     f"qualifier {q.text}: {dom}", py_files + (cpp_files if enum else ()))
        if enum:
            for v in q.domain:
                yield Symbol(f"ptx.{ins.id}.{q.name}.{v}", f"{mod}.{ins.id}({q.name}={v!r})",
                             f"{cpp}::{_member(q, v)}", f"{q.render(v) or '(left out)'}",
                             py_files + cpp_files)
    uses: dict[str, set[str]] = {}
    for f in ins.forms:
        for u in f.operands:
            uses.setdefault(u.name, set()).add(_use_text(u))
    for name, texts in uses.items():
        yield Symbol(f"ptx.{ins.id}.operands.{name}", f"{mod}.{ins.id}({name}=...)", "n/a",
                     "operand: " + " | ".join(sorted(texts)), py_files)
    for fn, (params, overloads, n) in _wrapper_functions(ins).items():
        yield Symbol(f"ptx::{fn}", "n/a", f"ptxgen::ptx::{fn}",
                     f"{_count(n)}; template <{', '.join(params)}>; overloads "
                     + " | ".join(f"({', '.join(o)})" for o in sorted(overloads)), cpp_files)


def _wrapper_functions(ins: Instruction
                       ) -> dict[str, tuple[list[str], set[tuple[str, ...]], int]]:
    """{C++ function: (template parameters, operand lists of its overloads, form count)}:
    one function per wrapper and operand alternative (named with the alternative's
    suffix); its template parameters are the qualifiers that vary among its forms."""
    by_fn: dict[str, list[Form]] = {}
    for f in ins.forms:
        w = next((w for w in ins.wrappers if w.when(f.params)), None)
        if w is None:
            continue
        variant = dict(f.variant)
        suffix = "".join(a.suffix for o in ins.operands if o.choice for a in o.choice
                         if a.name == variant.get(o.name))
        by_fn.setdefault(w.name + suffix, []).append(f)
    out: dict[str, tuple[list[str], set[tuple[str, ...]], int]] = {}
    for fn, forms in by_fn.items():
        free = [q for q in ins.qualifiers if not q.derived
                and len({f.params[q.name] for f in forms}) > 1]
        params = [q.name for q in sorted(free, key=lambda q: q.optional)]
        overloads = {tuple(u.name for u in f.operands) for f in forms}
        out[fn] = (params, overloads, len(forms))
    return out


def _count(n: int) -> str:
    return f"{n} form{'s' if n != 1 else ''}"


def _with(cube: Cube, members: Sequence[Form]) -> str:
    if cube == ALL:
        return "all forms"
    if not cube:
        return f"the form {members[0].key}"
    return f"forms with {cube_text(cube)}"


def _key(cube: Cube, members: Sequence[Form]) -> str:
    """The group in a change's subject: ``*`` for all forms, else as described."""
    return "*" if cube == ALL else cube_text(cube, members)
