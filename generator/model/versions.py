"""PTX ISA version views: the spec as of one PTX ISA version, a function of the model.

``at(spec, "8.7")`` is the model of the spec *as it stood at PTX ISA 8.7*, computed
once per version from the model and kept with it (so ``generate``, ``diff``,
``validate`` and the tests of one run share it); the emitters see an ordinary,
smaller spec and do not change. Every element of the model knows when it exists:

* targets: those that exist at the version (``since``; a renamed target until its
  rename), renames applied (at 9.0 sm_101* are gone and sm_110* exist; at 8.8 the
  reverse); PTX ISA versions and CUDA toolkits up to it; families reduced to the
  members that exist; renames dropped (as of one version a target has exactly one
  name);
* instructions: only the forms supported at the version on some target that
  exists then (:func:`supported_at`, the predicate ``ptxgen support`` answers
  with, from each form's gates; the versions of each form, instruction and value are
  computed once in the model, :func:`ptxgen.model.lifetimes.lifetime`, and the view
  filters by them). An instruction with no such form is absent; so
  are qualifier values, operand alternatives, flags and optional operands that no
  remaining form uses (a flag or optional operand that is always off is removed
  from the instruction, and every condition that names it is evaluated). Gates
  whose version is later, or whose targets do not exist yet, are removed, and
  where the forms they excluded would otherwise reappear, a rule
  (``ptx-isa-X.Y-...``) says why they are not there; target selectors that name
  targets that do not exist yet are rewritten to the targets that do;
* descriptors: a descriptor whose ``since`` is later is absent, and so is every
  MMA kind whose own ``since`` is later (``since.kinds``) and every layout variant
  whose ``since`` is later (``variants``); the shapes of a kind are those of the
  instructions of the view.

The view is a query on the model, not a second build: its targets are the whole
spec's :class:`Target` objects that exist then (:func:`targets_at`); each instruction
of the view is the whole spec's :class:`Instruction` with every element (qualifier,
operand, alternative, combination, rule, gate, value gate, deviation, descriptor rule,
wrapper) kept as it is, narrowed to the values the remaining forms use, retargeted, or
dropped; and its forms are the whole spec's forms supported at the version, with their
support on the targets of then. No spec data is parsed, no instruction is built from
data and no form is enumerated again.

The rules of an instruction as of a version are also written out as spec data, by the
same decisions, element by element (the generated ``ptxgen.isa.ptx`` embeds that data
and builds its model from it: the tests check that this model is the view's, element by
element and form by form, and that every form's support matrix is the whole spec's at
the version). A view that cannot be written (a target selection no selector of the
version names, a rule that refuses every form) is a :class:`ViewError`. Elements keep
their sources: descriptor elements their ``file:line``, and ``ptxgen diff --ptx-isa``
locates the rest in the real spec files (only elements the view has).

``ptxgen support --ptx-isa`` lists the rows of a form's support matrix that the view
has (:func:`matrix_at`), and validation's version checks (the descriptors' ``since``)
use :func:`first_version`.

This module imports neither YAML nor Jinja nor JSON Schema at import time, so the
version checks of the fast CLI paths can use it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from ptxgen.model import Spec
from ptxgen.model.descriptors import Descriptor, descriptor_since, with_shapes, without_shapes
from ptxgen.model.instructions import (
    FALSE,
    NONE,
    TRUE,
    Combination,
    Condition,
    DescriptorRule,
    Form,
    Gate,
    Instruction,
    InstructionSet,
    Matcher,
    Operand,
    Qualifier,
    Rule,
    Support,
    ValueGate,
    Wrapper,
    norm,
    rule_targets,
    vkey,
)
from ptxgen.model.lifetimes import lifetime, supported_at
from ptxgen.model.targets import Targets, build_targets

_T = TypeVar("_T")

Path_ = tuple[str | int, ...]

DESCRIPTOR_SCHEMA = "descriptor.schema.json"
TARGETS_SCHEMA = "targets.schema.json"


class ViewError(ValueError):
    """A view that cannot be made: a version the spec does not list, a descriptor or
    kind that does not exist yet (reported as one line, exit status 2)."""


# -- versions ---------------------------------------------------------------------------

def check_version(versions: Sequence[str], version: str) -> str:
    """``version`` if the spec lists it; else :class:`ViewError` naming the versions."""
    if not versions:
        raise ViewError(f"--ptx-isa: {version!r}: the spec lists no PTX ISA versions "
                        "(it has no targets.yaml)")
    if version not in versions:
        raise ViewError(f"--ptx-isa: {version!r} is not a PTX ISA version of the spec; "
                        f"allowed: {', '.join(versions)}")
    return version


def matrix_at(matrix: Mapping[str, str], targets: Targets, version: str) -> dict[str, str]:
    """The rows of a support matrix ({target: first version}) as of ``version``: the
    targets that exist then, from that version or earlier (a form's matrix in the view
    of ``version``; ``ptxgen support --ptx-isa`` lists them)."""
    x = vkey(version)
    return {t: v for t, v in matrix.items()
            if targets.get(t).exists_at(version) and vkey(v) <= x}


def first_version(forms: Iterable[Form], targets: Targets) -> str | None:
    """The first PTX ISA version at which any of ``forms`` exists (on some target)."""
    firsts = [v for f in forms for v in f.support.matrix(targets).values()]
    return min(firsts, key=vkey) if firsts else None


def spec_versions(spec: Spec) -> tuple[str, ...]:
    """The PTX ISA versions the spec lists (none without a targets.yaml)."""
    return spec.targets.versions if spec.targets is not None else ()


# -- descriptors: ``since`` ------------------------------------------------------------------

def appears_in(data: Mapping[str, Any], kind: str | None = None) -> str | None:
    """The first version at which the descriptor (kind) of a descriptor file's data
    exists; None: at every version."""
    version, kinds = descriptor_since(data)
    return _first_of(version, kinds, kind)


def _first_of(version: str | None, kinds: Mapping[str, str], kind: str | None) -> str | None:
    if kind is not None and kind in kinds:
        if version is None or vkey(kinds[kind]) > vkey(version):
            return kinds[kind]
    return version


def exists_at(data: Mapping[str, Any], version: str, kind: str | None = None) -> bool:
    first = appears_in(data, kind)
    return first is None or vkey(first) <= vkey(version)


def descriptor_appears_in(d: Descriptor, kind: str | None = None) -> str | None:
    """The first version at which the descriptor (kind) exists; None: at every version."""
    return _first_of(d.since, dict(d.kinds_since), kind)


def descriptor_exists_at(d: Descriptor, version: str, kind: str | None = None) -> bool:
    """Whether the descriptor (kind) exists at ``version``."""
    first = descriptor_appears_in(d, kind)
    return first is None or vkey(first) <= vkey(version)


def check_descriptor_at(spec_dir: Path, version: str | None, descriptor: str,
                        kind: str | None, target: str | None = None) -> None:
    """For ``encode`` / ``decode`` / ``zero-column-mask --ptx-isa``: raise
    :class:`ViewError` unless ``version`` is a version of the spec and the descriptor
    (kind) exists then. Reads only targets.yaml and the descriptor files."""
    from ptxgen.errors import SpecError
    from ptxgen.load import load_file

    if not spec_dir.is_dir():
        raise ViewError(f"--spec: {spec_dir} is not a folder (--ptx-isa reads the spec's "
                        "PTX ISA versions and descriptor versions from it)")
    versions: list[str] = []
    targets: dict[str, str] = {}
    found: Mapping[str, Any] | None = None
    try:
        for p in sorted(spec_dir.rglob("*.yaml")):
            if "schema" in p.relative_to(spec_dir).parts:
                continue
            head = p.read_text(encoding="utf-8")[:400]
            if TARGETS_SCHEMA in head:
                tdata = load_file(p).data
                versions = [str(v) for v in tdata.get("ptx_isa_versions", [])]
                targets = {str(t["name"]): str(t.get("since", versions[0] if versions else ""))
                           for t in tdata.get("targets", ()) if isinstance(t, Mapping)}
            elif DESCRIPTOR_SCHEMA in head and found is None:
                data = load_file(p).data
                if isinstance(data, Mapping) and data.get("descriptor") == descriptor:
                    found = data
    except (SpecError, OSError, UnicodeDecodeError) as exc:
        raise ViewError(f"--spec: cannot read {spec_dir}: {str(exc).splitlines()[0]}") from None
    if version is not None:
        check_version(versions, version)
    if target is not None:
        if target not in targets:
            from ptxgen.names import did_you_mean

            raise ViewError(f"--target: unknown target {target!r}"
                            f"{did_you_mean(target, list(targets))}; the spec knows "
                            f"{', '.join(targets)}")
        at = version or versions[-1]
        if targets[target] and vkey(at) < vkey(targets[target]):
            raise ViewError(f"--target: {target} does not exist at PTX ISA {at} (it appears "
                            f"in {targets[target]})")
        if found is not None and not exists_at(found, at):
            raise ViewError(f"{descriptor} does not exist at PTX ISA {at} (it appears in "
                            f"{appears_in(found)})")
        return  # the kind: the variant's or the baseline's, checked by descriptor_class()
    if found is None or version is None:
        return
    if not exists_at(found, version, kind):
        where = f"{descriptor} --kind {kind}" if kind else descriptor
        raise ViewError(f"{where} does not exist at PTX ISA {version} (it appears in "
                        f"{appears_in(found, kind)})")


# -- the view of a spec -----------------------------------------------------------------------

def at(spec: Spec, version: str) -> Spec:
    """The spec as of PTX ISA ``version`` (see the module doc), computed once per version
    and kept with ``spec``. :class:`ViewError` for a version the spec does not list."""
    check_version(spec_versions(spec), version)
    view = spec.views.get(version)
    if view is None:
        view = spec.views[version] = _view(spec, version)
    return view


def _view(spec: Spec, version: str) -> Spec:
    assert spec.targets is not None and spec.targets.data is not None
    vt = targets_at(spec.targets, version)
    gone: set[str] = set()
    iset: InstructionSet | None = None
    full = spec.instructions
    if full is not None:
        iset = instructions_at(full, version, vt)
        gone = {rel for rel, _ in (full.data or ({}, ()))[1]} - {
            rel for rel, _ in (iset.data if iset is not None and iset.data else ({}, ()))[1]}
    descriptors = []
    for d in spec.descriptors:
        vd = _view_descriptor(d, version)
        if vd is None:
            gone.add(d.spec_file)
        else:
            descriptors.append(with_shapes(vd, iset) if iset is not None else vd)
    return Spec(tuple(descriptors), tuple(f for f in spec.spec_files if f not in gone), iset,
                vt)


def instructions_at(full: InstructionSet, version: str, vt: Targets | None = None
                    ) -> InstructionSet | None:
    """The instruction set as of ``version`` on the view's targets ``vt`` (default:
    :func:`targets_at` of ``full``'s), made from the model of the whole spec: each
    instruction keeps the forms supported at the version (its model objects filtered and
    retargeted, its forms those of the whole spec's model), with the spec data it is
    written as (what ``ptxgen.isa.ptx`` embeds). None when no instruction exists then."""
    assert full.data is not None
    _, files = full.data
    if vt is None:
        vt = targets_at(full.targets, version)
    by_id = {i.id: i for i in full.instructions}
    existing = frozenset(vt.names)
    instructions: list[Instruction] = []
    view_files: list[tuple[str, Mapping[str, Any]]] = []
    for rel, data in files:
        raws: list[Any] = []
        for raw in data["instructions"]:
            made = _view_instruction(raw, by_id[raw["id"]], version, full.targets, vt,
                                     existing)
            if made is not None:
                raws.append(made[0])
                instructions.append(made[1])
        if raws:
            view_files.append((rel, {k: raws if k == "instructions" else v
                                     for k, v in data.items()}))
    if not view_files:
        return None
    kept = {rel for rel, _ in view_files} | {TARGETS_FILE}
    assert vt.data is not None
    return InstructionSet(vt, tuple(instructions),
                          tuple(n for n in full.notes if n.spec_file in kept),
                          (vt.data, tuple(view_files)))


TARGETS_FILE = "spec/targets.yaml"  # the spec file of the targets' notes


class _Edit:
    """Edits of one element's data, addressed by paths into the *original* data and
    applied in one pass (the original is not changed)."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.dropped: set[Path_] = set()
        self.replaced: dict[Path_, Any] = {}
        self.appended: dict[Path_, list[Any]] = {}
        self.put_keys: dict[Path_, dict[str, Any]] = {}

    def drop(self, path: Path_) -> None:
        self.dropped.add(path)

    def replace(self, path: Path_, value: Any) -> None:
        self.replaced[path] = value

    def put(self, path: Path_, value: Any) -> None:
        """Set ``path`` (replace it if it exists, add the key if not)."""
        if self._get(path) is not _MISSING:
            self.replace(path, value)
            self.dropped.discard(path)
        else:
            self.put_keys.setdefault(path[:-1], {})[str(path[-1])] = value

    def append(self, list_path: Path_, item: Any) -> None:
        """Append ``item`` to the list at ``list_path`` (created if missing)."""
        if self._get(list_path) is _MISSING:
            parent = self.put_keys.setdefault(list_path[:-1], {})
            parent.setdefault(str(list_path[-1]), []).append(item)
            return
        self.appended.setdefault(list_path, []).append(item)

    def _get(self, path: Path_) -> Any:
        node: Any = self.data
        for key in path:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                return _MISSING
        return node

    def apply(self) -> Any:
        """The edited data; the parts without edits are the original's (not copied)."""
        touched: set[Path_] = set()
        for path in (*self.dropped, *self.replaced):
            touched.update(path[:i] for i in range(len(path)))
        for path in (*self.appended, *self.put_keys):
            touched.update(path[:i] for i in range(len(path) + 1))

        def walk(node: Any, old: Path_) -> Any:
            if old in self.replaced:
                return copy.deepcopy(self.replaced[old])
            if old not in touched:
                return node
            if isinstance(node, dict):
                out: dict[Any, Any] = {}
                for k, v in node.items():
                    p = old + (k,)
                    if p not in self.dropped:
                        out[k] = walk(v, p)
                for k, v in self.put_keys.get(old, {}).items():
                    out[k] = copy.deepcopy(v)
                return out
            if isinstance(node, list):
                items = [walk(v, old + (i,)) for i, v in enumerate(node)
                         if old + (i,) not in self.dropped]
                items += [copy.deepcopy(v) for v in self.appended.get(old, [])]
                return items
            return node

        return walk(self.data, ())


_MISSING = object()



# -- targets --------------------------------------------------------------------------------

def targets_at(targets: Targets, version: str) -> Targets:
    """The targets as of ``version``, from the model of the whole spec's targets: the
    PTX ISA versions and CUDA toolkits up to it, the targets that exist then, each with
    the one name it has then (no renames), and the families reduced to those targets.
    Their data (:attr:`Targets.data`) is :func:`targets_data_at` of the whole spec's."""
    assert targets.data is not None
    x = vkey(version)
    existing = tuple(replace(t, until=None, renamed_to=None) if t.until is not None
                     or t.renamed_to is not None else t
                     for t in targets.targets if t.exists_at(version))
    sms = {t.sm for t in existing}
    families = {name: kept for name, members in targets.families.items()
                if (kept := tuple(m for m in members if m in sms))}
    return Targets(tuple(v for v in targets.versions if vkey(v) <= x), existing, families,
                   targets.suffix_macros,
                   tuple((c, p) for c, p in targets.toolkits if vkey(str(p)) <= x),
                   targets_data_at(targets.data, version))


def targets_data_at(data: Mapping[str, Any], version: str) -> Any:
    """``spec/targets.yaml``'s data as of ``version`` (the data the view's targets are
    built from, and that ``ptxgen.isa.ptx`` embeds)."""
    full = build_targets(data)
    edit = _Edit(data)
    for i, v in enumerate(data["ptx_isa_versions"]):
        if vkey(str(v)) > vkey(version):
            edit.drop(("ptx_isa_versions", i))
    existing = set()
    for i, t in enumerate(data["targets"]):
        if full.get(t["name"]).exists_at(version):
            existing.add(full.get(t["name"]).sm)
        else:
            edit.drop(("targets", i))
    for i, fam in enumerate(data.get("families", ())):
        kept = [j for j, sm in enumerate(fam["members"]) if sm in existing]
        if not kept:
            edit.drop(("families", i))
        for j, sm in enumerate(fam["members"]):
            if sm not in existing:
                edit.drop(("families", i, "members", j))
    for i in range(len(data.get("renames", ()))):
        edit.drop(("renames", i))  # as of one version, every target has one name
    toolkits = data.get("cuda_toolkits")
    if isinstance(toolkits, Mapping):
        for i, t in enumerate(toolkits.get("versions", ())):
            if vkey(str(t["ptx_isa"])) > vkey(version):
                edit.drop(("cuda_toolkits", "versions", i))  # toolkits that came later
    return edit.apply()


# -- descriptors ------------------------------------------------------------------------------

def _view_descriptor(d: Descriptor, version: str) -> Descriptor | None:
    """The descriptor without the kinds that do not exist yet, and without the shapes of
    the whole spec's instructions; None when it does not exist yet."""
    if not descriptor_exists_at(d, version):
        return None
    base = without_shapes(d)
    variants = tuple(v for v in base.variants if vkey(v.since) <= vkey(version))
    if variants != base.variants:
        base = replace(base, variants=variants)
    gone = {k for k, _ in d.kinds_since if not descriptor_exists_at(d, version, k)}
    if not gone:
        return base
    kinds = tuple(k for k in d.kinds if k not in gone)
    if d.kinds and not kinds:
        return None
    tables = tuple(replace(t, layouts=tuple(lay for lay in t.layouts if lay.kind not in gone))
                   for t in base.tables)
    return replace(base, kinds=kinds,
                   layouts=tuple(lay for lay in base.layouts if lay.kind not in gone),
                   tables=tuple(t for t in tables if t.layouts))


# -- instructions -----------------------------------------------------------------------------

def _view_instruction(raw: Mapping[str, Any], ins: Instruction, version: str,
                      full: Targets, vt: Targets, existing: frozenset[str]
                      ) -> tuple[Any, Instruction] | None:
    """The spec data and the model of one instruction as of ``version``; None when no
    form of it exists then."""
    iv = _InstructionView(raw, ins, version, full, vt, existing)
    if not iv.plan():
        return None
    ins_view = iv.instruction()  # adds the rules that keep forms out to the data too
    return iv.edit.apply(), ins_view


def _first_values(seen: frozenset[str], order: Sequence[str]) -> list[str]:
    return [v for v in order if v in seen]



class _InstructionView:
    """One instruction as of ``version``: its model, made from the whole spec's model
    objects (each element kept, dropped or narrowed to the forms that exist then), and
    the edits that write its spec data, decided together element by element."""

    def __init__(self, raw: Mapping[str, Any], ins: Instruction, version: str,
                 full_targets: Targets, vt: Targets, existing: frozenset[str]) -> None:
        self.edit = _Edit(raw)
        self.base: Path_ = ()
        self.raw = raw
        self.ins = ins
        self.version = version
        self.full_targets = full_targets
        self.vt = vt
        self.kept: list[Form] = []
        self.domains: dict[str, list[str]] = {}
        self.domset: dict[str, frozenset[str]] = {}
        self.fixed: dict[str, str] = {}
        self.excluded: dict[str, str] = {}  # gate id -> why it is gone
        self.existing = existing
        # the model objects of the view, element by element
        self.qualifiers: list[Qualifier] = []
        self.operands: list[Operand] = []
        self.combinations: dict[int, Combination] = {}  # by id() of the whole spec's
        self.rules: list[Rule] = []
        self.gates: list[Gate] = []
        self.wrappers: list[Wrapper] = []
        self.seed_syntax: list[tuple[str, str, Condition]] = []
        self.descriptor_rules: list[DescriptorRule] = []
        self.deviations: list[Gate] = []
        self.examples: list[Mapping[str, Any]] = []

    # -- planning ----------------------------------------------------------------------
    def plan(self) -> bool:
        """Decide every element; False when no form of the instruction exists at the
        version."""
        ins, x = self.ins, self.version
        if x not in lifetime(ins).versions:
            return False
        self.kept = _kept_forms(ins, x)
        values = lifetime(ins).values  # the values that exist at x: those of the kept forms
        for name, dom in ins.params:
            self.domset[name] = frozenset([v for v, on in values[name].items() if x in on])
            self.domains[name] = _first_values(self.domset[name], dom)
        for q in ins.qualifiers:
            if q.absent is not None and self.domains[q.name] == [q.absent]:
                self.fixed[q.name] = q.absent
        for o in ins.operands:
            if o.optional and self.domains[o.name] == [FALSE]:
                self.fixed[o.name] = FALSE
        self._gates()
        self._qualifiers()
        self._operands()
        self._combinations()
        self._rules()
        for w, item, path in self._items("wrappers", ins.wrappers):
            when = self._when_kept(path, item["when"], w.when)
            if when is not None:
                self.wrappers.append(w if when is w.when else replace(w, when=when))
        for (seed, block, cond), item, path in self._items("seed_syntax", ins.seed_syntax):
            when = self._when_kept(path, item["when"], cond)
            if when is not None:
                self.seed_syntax.append((seed, block, when))
        gone = {o.name for o in ins.operands if o.name in self.fixed}
        for d, item, path in self._items("deviations", ins.deviations):
            when = self._when_kept(path, item["when"], d.when)
            if when is not None and d.targets is not None and not d.targets & self.existing:
                self.edit.drop(path)  # on targets none of which exists at the version
            elif when is not None:
                self.deviations.append(self._gate(d, path, when))
        for r, item, path in self._items("descriptor_rules", ins.descriptor_rules):
            when = None if item["operand"] in gone else self._when_kept(
                path, item["when"], r.when)
            if when is None:
                self.edit.drop(path)
                continue
            selectors = self._rule_targets(path, item)
            if selectors is None:
                continue
            self.descriptor_rules.append(replace(
                r, when=when, targets=rule_targets(self.vt, selectors),
                selectors=tuple(selectors.get("targets", ())),
                except_selectors=tuple(selectors.get("except_targets", ()))))
        # Lists the view does not know by name: an item whose condition no remaining
        # form meets, or whose operand is gone, goes (the model has no such lists).
        for key, items in self.raw.items():
            if key in _KNOWN or not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                if not isinstance(item, Mapping):
                    continue
                path = self.base + (key, i)
                when = item.get("when")
                if (item.get("operand") in gone or (isinstance(when, Mapping) and (
                        not self._condition(path + ("when",), when)
                        or not self._any_kept(Condition.build(when))))):
                    self.edit.drop(path)
        examples = self.raw.get("examples", ())
        n = len(ins.qualifiers)
        kept_q = {f.values[:n] for f in self.kept} if examples else set()
        full_q = {f.values[:n] for f in ins.forms} if examples else set()
        for i, ex in enumerate(examples):
            # the qualifier values the example's opcode reads as
            read = [tuple((q.name, p[q.name]) for q in ins.qualifiers)
                    for p in ins.parse_opcode(ex["opcode"])[0]]
            if not full_q.isdisjoint(read) and kept_q.isdisjoint(read):
                self.edit.drop(self.base + ("examples", i))
            else:
                self.examples.append(ins.examples[i])
        return True

    def _items(self, key: str, objects: Sequence[_T]
               ) -> Iterator[tuple[_T, Mapping[str, Any], Path_]]:
        """(model object, its spec data, its data path) of one list of the instruction."""
        items = self.raw.get(key, ())
        if len(items) != len(objects):
            raise ViewError(f"{self.ins.id}: {key}: the model and the spec data differ")
        for i, (obj, item) in enumerate(zip(objects, items, strict=True)):
            yield obj, item, self.base + (key, i)

    def _when_kept(self, path: Path_, raw: Mapping[str, Any], cond: Condition
                   ) -> Condition | None:
        """The condition of an item as of the version, or None (the item goes) when no
        form of the view meets it."""
        if not self._condition(path + ("when",), raw) or not self._any_kept(cond):
            self.edit.drop(path)
            return None
        return self._cond(cond, raw)

    def _why_excluded(self, since: str | None, targets: frozenset[str] | None) -> str | None:
        if since is not None and vkey(since) > vkey(self.version):
            return f"needs PTX ISA {since}"
        if targets is not None and not targets & self.existing:
            return (f"is only on {', '.join(sorted(targets))}, none of which exists at "
                    f"PTX ISA {self.version}")
        return None

    def _gates(self) -> None:
        for g, item, path in self._items("gates", self.ins.gates):
            why = self._why_excluded(g.since, g.targets)
            if why is not None:
                self.edit.drop(path)
                self.excluded[g.id] = why
            elif not self._condition(path + ("when",), item["when"]):
                self.edit.drop(path)
            else:
                self.gates.append(self._gate(g, path, self._cond(g.when, item["when"])))

    def _gate(self, g: Gate, path: Path_, when: Condition) -> Gate:
        """A gate with the condition ``when``, on the targets of its that exist then."""
        late = {t for t, v in g.later if vkey(v) > vkey(self.version)}
        if late:  # targets that have the feature only from a later version: not here
            names = (g.targets if g.targets is not None else frozenset(self.vt.names))
            sels = self._selectors_for(names & self.existing - late)
            if sels is None:
                raise ViewError(f"{self.ins.spec_file}: {self.ins.id}: the targets of gate "
                                f"{g.id} cannot be written at PTX ISA {self.version}")
            self.edit.replace(path + ("targets",), sels)
            rest = {t: v for t, v in g.later if t not in late}
            if rest:
                self.edit.replace(path + ("later",), rest)
            else:
                self.edit.drop(path + ("later",))
            return replace(g, when=when, selectors=tuple(sels),
                           targets=self._targets_of(sels), later=tuple(sorted(rest.items())))
        selectors = self._retarget(path, g.selectors, g.targets)
        if when is g.when and selectors == g.selectors and g.targets is None:
            return g
        return replace(g, when=when, selectors=selectors, targets=self._targets_of(selectors))

    def _targets_of(self, selectors: Sequence[str]) -> frozenset[str] | None:
        """The view's targets that ``selectors`` select (None: no selector, every one)."""
        if not selectors:
            return None
        return frozenset().union(*(self.vt.select(s) for s in selectors))

    def _retarget(self, path: Path_, selectors: tuple[str, ...],
                  targets: frozenset[str] | None) -> tuple[str, ...]:
        """The selectors that select, on the view's targets, the ``targets`` that exist at
        the version (written as before where they still select them)."""
        if targets is None:
            return selectors
        want = targets & self.existing
        out: list[str] = []
        changed = False
        for s in selectors:
            full_s = self.full_targets.select(s) & self.existing
            try:
                got: frozenset[str] | None = self.vt.select(s)
            except (KeyError, ValueError):
                got = None
            if got == full_s:
                out.append(s)
                continue
            changed = True
            for t in sorted(full_s, key=lambda n: (self.vt.get(n).sm, n)):
                sel = t if self.vt.get(t).suffix in ("a", "f") else f"{t}+"
                if self.vt.select(sel) <= full_s and sel not in out:
                    out.append(sel)
        got_all = frozenset().union(*(self.vt.select(s) for s in out)) if out else frozenset()
        if got_all != want:
            raise ViewError(f"{self.ins.spec_file}: {self.ins.id}: the targets "
                            f"{', '.join(selectors)} cannot be written at PTX ISA "
                            f"{self.version}")
        if not changed:
            return selectors
        self.edit.replace(path + ("targets",), out)
        return tuple(out)

    def _selectors_for(self, names: frozenset[str]) -> list[str] | None:
        """Target selectors of the view that select exactly ``names`` (None: none do)."""
        out: list[str] = []
        got: frozenset[str] = frozenset()
        for t in sorted(names, key=lambda n: (self.vt.get(n).sm, n)):
            sel = t if self.vt.get(t).suffix in ("a", "f") else f"{t}+"
            if t not in got and self.vt.select(sel) <= names:
                out.append(sel)
                got |= self.vt.select(sel)
        return out if out and got == names else None

    def _rule_targets(self, path: Path_, item: Mapping[str, Any]
                      ) -> dict[str, list[str]] | None:
        """A target-dependent descriptor rule as of the version, as its ``targets`` /
        ``except_targets`` then ({}: none), or None when it goes: on the targets that
        exist then. A rule whose targets do not exist yet goes; ``except_targets`` that do
        not exist yet leave a rule that holds on every target (written ``targets``, so that
        it is still checked only where the target is known)."""
        key = "targets" if item.get("targets") else "except_targets"
        if not item.get(key):
            return {k: list(item[k]) for k in ("targets", "except_targets") if k in item}
        selected = frozenset().union(*(self.full_targets.select(x) for x in item[key]))
        here = selected & self.existing
        if key == "targets" and not here:
            self.edit.drop(path)
            return None
        out_keys = {k: list(item[k]) for k in ("targets", "except_targets") if k in item}
        if key == "except_targets" and not here:
            self.edit.drop(path + (key,))
            del out_keys[key]
            key, here = "targets", self.existing
        if here == selected and key in item:
            try:
                if frozenset().union(*(self.vt.select(x) for x in item[key])) == here:
                    return out_keys
            except (KeyError, ValueError):
                pass
        out = self._selectors_for(here)
        if out is None:
            raise ViewError(f"{self.ins.spec_file}: {self.ins.id}: the descriptor rule "
                            f"targets {', '.join(item[key] if key in item else ())} cannot be "
                            f"written at PTX ISA {self.version}")
        self.edit.put(path + (key,), out)
        out_keys[key] = out
        return out_keys

    def _qualifiers(self) -> None:
        for q, raw, path in self._items("qualifiers", self.ins.qualifiers):
            if q.name in self.fixed:
                self.edit.drop(path)
                continue
            dom = self.domset[q.name]
            values, numeric = q.values, q.numeric
            if not q.flag:
                vals = raw["values"]
                if isinstance(vals, list):
                    here = []
                    for j, v in enumerate(vals):
                        if norm(v) in dom:
                            here.append(v)
                        else:
                            self.edit.drop(path + ("values", j))
                    if len(here) != len(vals):
                        values = tuple(norm(v) for v in here)
                        numeric = all(isinstance(v, int) for v in here)
                elif [v for v in q.values if v not in dom]:
                    here = [int(v) if q.numeric else v for v in q.values if v in dom]
                    self.edit.replace(path + ("values",), here)
                    values = tuple(norm(v) for v in here)
                    numeric = all(isinstance(v, int) for v in here)
            aliases = []
            for j, (a, ra) in enumerate(zip(q.aliases, raw.get("aliases", ()), strict=True)):
                pa = path + ("aliases", j)
                if (a.value not in dom or a.same_as not in dom
                        or not self._condition(pa + ("when",), ra["when"])):
                    self.edit.drop(pa)
                else:
                    aliases.append(replace(a, when=self._cond(a.when, ra["when"])))
            derived = []
            for j, d in enumerate(raw.get("derived", ())):
                if d in self.fixed:
                    self.edit.drop(path + ("derived", j))
                else:
                    derived.append(d)
            optional = q.optional
            if optional and not q.flag and NONE not in dom:
                # every remaining form names the qualifier (a rule of the spec kept the
                # left-out forms away, and goes with them): it is required as of then, or
                # the data would build the left-out forms again.
                self.edit.drop(path + ("optional",))
                optional = False
            self.qualifiers.append(replace(q, values=values, numeric=numeric, optional=optional,
                                           aliases=tuple(aliases), derived=tuple(derived)))

    def _operands(self) -> None:
        for o, raw, path in self._items("operands", self.ins.operands):
            if o.name in self.fixed or ("when" in raw and not self._condition(
                    path + ("when",), raw["when"])):
                if o.choice:
                    raise ViewError(f"{self.ins.id}: operand {o.name} with alternatives "
                                    f"never appears at PTX ISA {self.version}")
                self.edit.drop(path)
                continue
            choice = o.choice
            if o.choice:
                dom = self.domset[o.name]
                alts = []
                for j, (a, ra) in enumerate(zip(o.choice, raw["choice"], strict=True)):
                    if a.name not in dom:
                        self.edit.drop(path + ("choice", j))
                        continue
                    for key in ("type", "count"):
                        if key in ra:
                            self._value_spec(path + ("choice", j, key), ra[key])
                    alts.append(replace(a, type=self._resolve(a.type),
                                        count=self._resolve(a.count)))
                choice = tuple(alts)
            for key in ("type", "count", "values", "immediate_values"):
                if key in raw:
                    self._value_spec(path + (key,), raw[key])
            for j, d in enumerate(raw.get("immediate_deviations", ())):
                self._value_spec(path + ("immediate_deviations", j, "values"), d["values"])
            for j, e in enumerate(raw.get("elements", ())):
                self._value_spec(path + ("elements", j, "values"), e["values"])
            self.operands.append(replace(
                o, when=self._cond(o.when, raw.get("when")), choice=choice,
                type=self._resolve(o.type), count=self._resolve(o.count),
                values=self._resolve(o.values),
                immediate_values=self._resolve(o.immediate_values),
                immediate_deviations=tuple((t, self._resolve(v), m)
                                           for t, v, m in o.immediate_deviations),
                elements=tuple((n, self._resolve(v)) for n, v in o.elements),
                value_gates=self._value_gates(path, o.value_gates,
                                              raw.get("value_gates", ()))))

    def _value_gates(self, path: Path_, gates: Sequence[ValueGate],
                     raw: Sequence[Mapping[str, Any]]) -> tuple[ValueGate, ...]:
        """An operand's value gates as of the version, as the instruction's gates: one
        that needs a later version, or whose targets do not exist yet, goes; the others
        keep the targets that exist then, written with the view's selectors."""
        out = []
        for j, vg in enumerate(gates):
            pg = path + ("value_gates", j)
            g = vg.gate
            when = raw[j].get("when")
            if (self._why_excluded(g.since, g.targets) is not None
                    or not self._condition(pg + ("when",), when)):
                self.edit.drop(pg)
                continue
            self._value_spec(pg + ("values",), raw[j]["values"])
            out.append(ValueGate(self._gate(g, pg, self._cond(g.when, when)),
                                 self._resolve(vg.values)))
        return tuple(out)

    def _combinations(self) -> None:
        used = {id(f.combination) for f in self.kept}
        for c, raw, path in self._items("combinations", self.ins.combinations):
            # Items of a match on kept names stay even where they always hold: a
            # combination requires the optional qualifiers it does not name to be absent.
            if id(c) not in used or not self._condition(path + ("match",), raw["match"]):
                self.edit.drop(path)
                continue
            match = self._cond(c.match, raw["match"])
            gate = None if c.gate is None else self._gate(c.gate, path, match)
            for name, spec in raw.get("operands", {}).items():
                self._value_spec(path + ("operands", name), spec)
            self.combinations[id(c)] = replace(
                c, match=match, gate=gate,
                operands={n: self._resolve(s) for n, s in c.operands.items()})

    def _rules(self) -> None:
        for r, raw, path in self._items("rules", self.ins.rules):
            rule = self._rule(path, raw, r)
            if rule is not None:
                self.rules.append(rule)

    def _rule(self, path: Path_, raw: Mapping[str, Any], r: Rule) -> Rule | None:
        if not self._condition(path + ("when",), raw["when"]):
            self.edit.drop(path)
            return None
        when = self._cond(r.when, raw["when"])
        require, forbid, equal, accepts = r.require, r.forbid, r.equal, r.ptxas_accepts
        holds_always = True
        violated = False
        if "require" in raw:
            if not self._condition(path + ("require",), raw["require"]):
                violated = True
                self.edit.drop(path + ("require",))
                require = Condition(())
            else:
                require = self._cond(r.require, raw["require"])
                if self._remaining(raw["require"]):
                    holds_always = False
        if "forbid" in raw and not violated:
            assert r.forbid is not None
            if not self._condition(path + ("forbid",), raw["forbid"]):
                self.edit.drop(path + ("forbid",))
                forbid = None
            else:
                forbid = self._cond(r.forbid, raw["forbid"])
                holds_always = False
        if "ptxas_accepts" in raw:
            assert r.ptxas_accepts is not None
            if not self._condition(path + ("ptxas_accepts",), raw["ptxas_accepts"]):
                self.edit.drop(path + ("ptxas_accepts",))
                accepts = None
            else:
                accepts = self._cond(r.ptxas_accepts, raw["ptxas_accepts"])
        if equal and not violated:
            fixed = {self.fixed[n] for n in equal if n in self.fixed}
            free = [n for n in equal if n not in self.fixed]
            if len(fixed) > 1:
                violated = True
            elif fixed:
                v = fixed.pop()
                required = {n: m for n, m in raw.get("require", {}).items()
                            if n not in self.fixed}
                for n in free:
                    if n in required:
                        raise ViewError(f"{self.ins.id}: rule {raw['id']}: cannot "
                                        f"evaluate at PTX ISA {self.version}")
                    required[n] = v
                self.edit.drop(path + ("equal",))
                equal = ()
                if required:
                    self.edit.put(path + ("require",), required)
                    require = Condition.build(required)
                    holds_always = False
            else:
                holds_always = False
        if violated:
            if not self._remaining(raw["when"]):
                raise ViewError(f"{self.ins.id}: rule {raw['id']} refuses every form at "
                                f"PTX ISA {self.version}")
            self.edit.put(path + ("forbid",), {})
            forbid = Condition(())
        elif holds_always:
            self.edit.drop(path)
            return None
        return replace(r, when=when, require=require, forbid=forbid, equal=equal,
                       ptxas_accepts=accepts)

    # -- conditions and value specs ----------------------------------------------------
    def _remaining(self, cond: Mapping[str, Any]) -> list[str]:
        return [n for n in cond if n not in self.fixed]

    def _condition(self, path: Path_, cond: Mapping[str, Any] | None) -> bool:
        """Record the edits of a condition; False when no form of the view can meet it.

        Items on removed names are dropped (they hold); list entries naming values
        the view no longer has are dropped.
        """
        for name, raw in (cond or {}).items():
            if name not in self.domains:
                raise ViewError(f"{self.ins.id}: condition on unknown name {name!r}")
            m = Matcher.build(raw)
            dom = self.domains[name]
            if not [v for v in dom if m(v)]:
                return False
            if name in self.fixed:
                self.edit.drop(path + (name,))
            elif isinstance(raw, list):
                for j, v in enumerate(raw):
                    if norm(v) not in self.domset[name]:
                        self.edit.drop(path + (name, j))
        return True

    def _cond(self, cond: Condition, raw: Mapping[str, Any] | None) -> Condition:
        """The model of a condition that :meth:`_condition` edited (``raw``: its data):
        without the items on removed names, lists without the values the view does not
        have."""
        items = []
        changed = False
        for name, m in cond.items:
            if name in self.fixed:
                changed = True
                continue
            if raw is not None and isinstance(raw[name], list) and not m.values <= (
                    dom := self.domset[name]):
                m = Matcher(m.values & dom, m.negate)
                changed = True
            items.append((name, m))
        return Condition(tuple(items)) if changed else cond

    def _value_spec(self, path: Path_, spec: Any) -> None:
        """A value spec (``by`` / ``div`` / literal) with removed names resolved and the
        branches of values the view does not have dropped."""
        resolved = self._resolve(spec)
        if resolved != spec:
            self.edit.replace(path, resolved)

    def _resolve(self, spec: Any) -> Any:
        if not isinstance(spec, dict) or "by" not in spec:
            return spec
        by = spec["by"]
        table = {norm(k): k for k in spec["values"]}
        if by in self.fixed:
            v = self.fixed[by]
            branch = spec["values"][table[v]] if v in table else spec.get("default")
            return spec if branch is None else self._resolve(branch)
        dom = self.domains.get(by, [])
        out = dict(spec)
        out["values"] = {k: self._resolve(spec["values"][k]) for n, k in table.items()
                         if n in dom}
        if "default" in spec:
            out["default"] = self._resolve(spec["default"])
        if not out["values"] and "default" in out:
            return out["default"]
        return out

    def _any_kept(self, cond: Condition) -> bool:
        """Whether some form of the view meets the condition ``cond`` (on one name: some
        value the view has for it)."""
        items = cond.items
        if len(items) == 1:
            name, matcher = items[0]
            return any(matcher(v) for v in self.domains[name])
        return any(cond(f.params) for f in self.kept)

    # -- the model of the view ----------------------------------------------------------
    def instruction(self) -> Instruction:
        """The instruction as of the version: the elements :meth:`plan` kept, a rule per
        set of gates that kept forms of the whole spec out (they would come back where the
        gates are gone), and the kept forms, with their support on the view's targets."""
        ins = self.ins
        view = replace(ins, qualifiers=tuple(self.qualifiers), operands=tuple(self.operands),
                       combinations=tuple(self.combinations.values()),
                       rules=tuple(self.rules), gates=tuple(self.gates),
                       wrappers=tuple(self.wrappers), seed_syntax=tuple(self.seed_syntax),
                       examples=tuple(self.examples), targets=self.vt,
                       descriptor_rules=tuple(self.descriptor_rules),
                       deviations=tuple(self.deviations))
        # positions whose values the view narrows (a fixed name: to its one value)
        narrowed = [(i, self.domset[n]) for i, (n, dom) in enumerate(ins.params)
                    if len(self.domset[n]) != len(dom)]
        kept = {id(f) for f in self.kept}
        used = {id(f.combination) for f in self.kept}
        needed: dict[tuple[str, ...], None] = {}
        for f in ins.forms:
            if id(f) in kept or id(f.combination) not in used:
                continue
            values = f.values
            if all(values[i][1] in dom for i, dom in narrowed):
                # a form of the whole spec that the view's rules allow: it does not exist
                # at the version, so a rule must refuse it
                gates = f.support.gates
                why = [g for g in gates if g in self.excluded]
                needed[tuple(why[:1]) or tuple(gates)] = None
        rules = [self._exclusion_rule(ids, view) for ids in needed]
        if rules:
            view = replace(view, rules=view.rules + tuple(rules))
            for f in self.kept:
                params = f.params
                hit = next((r for r in rules if r.when(params)), None)
                if hit is not None:
                    raise ViewError(f"{ins.id}: the PTX ISA {self.version} view lost form "
                                    f"{f.key} (rule {hit.id})")
        forms = []
        supports: dict[int, Support] = {}
        with_combinations = bool(view.combinations)
        at = [i for i, (n, _) in enumerate(ins.params) if n not in self.fixed]
        project: Callable[[tuple[tuple[str, str], ...]], tuple[tuple[str, str], ...]] | None
        if len(at) == len(ins.params):
            project = None  # no name is fixed: the values of the whole spec's form
        elif len(at) > 1:
            project = itemgetter(*at)
        else:
            def project(values: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
                return tuple(values[i] for i in at)
        for f in self.kept:
            vf = Form(view, f.values if project is None else project(f.values))
            s = f.support
            vs = supports.get(id(s))
            if vs is None:
                # a target that has the form only from a later version has it not here
                late = {t for t, v in s.later if vkey(v) > vkey(self.version)}
                vs = supports[id(s)] = Support(
                    (s.targets & self.existing) - late, s.since, s.gates,
                    tuple((t, v) for t, v in s.later if t not in late))
            vf.__dict__["support"] = vs
            if "opcode" in f.__dict__:
                vf.__dict__["opcode"] = f.__dict__["opcode"]
            if with_combinations:
                vf.__dict__["combination"] = self.combinations[id(f.combination)]
                if f.__dict__.get("_combination_count") == 1:
                    vf.__dict__["_combination_count"] = 1
            forms.append(vf)
        view.__dict__["forms"] = tuple(forms)
        return view

    def _exclusion_rule(self, ids: tuple[str, ...], view: Instruction) -> Rule:
        """The rule that refuses the forms the gates ``ids`` allow at later versions or on
        targets that do not exist yet (written to the data too)."""
        gates = {g.id: g for g in self.ins.gates}
        for c in self.ins.combinations:
            if c.gate is not None:
                gates.setdefault(c.gate.id, c.gate)
        when: dict[str, list[str]] = {}
        for gid in ids:
            g = gates[gid]
            for name, m in g.when.items:
                if name in self.fixed:
                    continue
                hits = [v for v in self.domains[name] if m(v)]
                if name in when:
                    hits = [v for v in hits if v in when[name]]
                when[name] = hits
        if not when:
            raise ViewError(f"{self.ins.id}: gate(s) {', '.join(ids)} exclude every form at "
                            f"PTX ISA {self.version}")
        q_numeric = {q.name: q.numeric for q in view.qualifiers}
        cond = {n: [int(v) if q_numeric.get(n) else _plain(v) for v in vals]
                for n, vals in when.items()}
        why = self.excluded.get(ids[0], "")
        reason = why or (f"on no target that exists at PTX ISA {self.version} (gates "
                         f"{', '.join(ids)})")
        rid = f"ptx-isa-{self.version}-{'-'.join(ids)}"
        message = f"not available at PTX ISA {self.version}: {reason}"
        self.edit.append(self.base + ("rules",), {"id": rid, "when": cond, "forbid": {},
                                                  "message": message})
        return Rule(rid, Condition.build(cond), Condition(()), Condition(()), (),
                    " ".join(message.split()), self.ins.provenance)


def _kept_forms(ins: Instruction, version: str) -> list[Form]:
    """The forms of ``ins`` that exist at ``version`` (their :func:`lifetime`)."""
    return [f for f, on in zip(ins.forms, lifetime(ins).forms, strict=True) if version in on]


_KNOWN = frozenset({"qualifiers", "operands", "combinations", "rules", "gates", "wrappers",
                    "seed_syntax", "examples", "deviations", "descriptor_rules"})


def _plain(v: str) -> Any:
    return True if v == TRUE else False if v == FALSE else v


__all__ = ["ViewError", "appears_in", "at", "check_descriptor_at", "check_version",
           "descriptor_appears_in", "descriptor_exists_at", "descriptor_since", "exists_at",
           "first_version", "instructions_at", "matrix_at", "spec_versions", "supported_at",
           "targets_at", "targets_data_at"]
