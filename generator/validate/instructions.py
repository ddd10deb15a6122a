"""Semantic checks of ``spec/targets.yaml`` and ``spec/instructions/*.yaml``.

What the JSON Schema cannot express: names that are unique and valid
identifiers, every condition naming a real qualifier or operand and one of
its values, target selectors and versions that exist, note references that
resolve, and rules with no seed that carry ptxas evidence. These checks read the
documents as written; the properties of the derived form set (every form
supported somewhere, opcodes that read back, one combination and one wrapper per
form, ...) are checked once the model is built (:mod:`ptxgen.model.checks`), for
every instruction that passed these checks (:class:`InstructionChecks`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptxgen.errors import Diagnostic, printable
from ptxgen.load import Document, Path_, load_file
from ptxgen.spec_util import (
    FALSE,
    NONE,
    TRUE,
    condition_values,
    norm,
    parse_target,
    range_values,
    selector_problem,
    vkey,
)
from ptxgen.validate.semantic import _Checker as _DescriptorChecker

TARGETS_FILE = "targets.yaml"


class _Checker(_DescriptorChecker):
    """The descriptor checks' reporting (err, ident, notes) plus provenance and versions."""

    def note_ref(self, path: Path_, ref: str | None) -> None:
        if ref is not None:
            super().note_ref(path, ref)

    def provenance(self, path: Path_, prov: Mapping[str, Any] | None) -> None:
        if prov is None:
            return
        self.note_ref(path + ("note",), prov.get("note"))
        if not prov.get("seeds") and not prov.get("ptxas") and not prov.get("document"):
            self.err(path, "a rule that no seed states needs its ptxas evidence "
                           "(provenance.ptxas) or the PTX ISA section that states it "
                           "(provenance.document)")

    def version(self, path: Path_, version: str | None, versions: tuple[str, ...]) -> None:
        if version is not None and version not in versions:
            self.err(path, f"PTX ISA version {version} is not in ptx_isa_versions "
                           f"({versions[0]} ... {versions[-1]})")


# -- targets ----------------------------------------------------------------

def _check_targets(doc: Document) -> list[Diagnostic]:
    c = _Checker(doc)
    d = doc.data
    c.collect_notes(d)
    versions = tuple(d["ptx_isa_versions"])
    if len(set(versions)) != len(versions) or list(versions) != sorted(versions,
                                                                      key=vkey):
        c.err(("ptx_isa_versions",), "versions must be unique and in ascending order")
    if {s["suffix"] for s in d["suffixes"]} != {"", "a", "f"}:
        c.err(("suffixes",), "the suffixes '', 'a' and 'f' must each be described once")
    fam_of: dict[int, str] = {}
    for i, fam in enumerate(d["families"]):
        c.note_ref(("families", i, "note"), fam.get("note"))
        for sm in fam["members"]:
            if sm in fam_of:
                c.err(("families", i, "members"), f"sm_{sm} is also in family {fam_of[sm]}")
            fam_of[sm] = fam["name"]
    names: dict[str, int] = {}
    sms = set()
    for i, t in enumerate(d["targets"]):
        path: Path_ = ("targets", i)
        name = t["name"]
        if name in names:
            c.err(path + ("name",), f"duplicate target {name!r}")
        names[name] = i
        sm, suffix = parse_target(name)
        sms.add(sm)
        c.version(path + ("since",), t["since"], versions)
        c.note_ref(path + ("note",), t.get("note"))
        toolkits = {str(r["cuda"]) for r in d.get("cuda_toolkits", {}).get("versions", [])}
        for j, dev in enumerate(t.get("deviations", [])):
            dp = path + ("deviations", j)
            c.version(dp + ("since",), dev["since"], versions)
            for m, tk in enumerate(dev["toolkits"]):
                if tk not in toolkits:
                    c.err(dp + ("toolkits", m), f"toolkit {tk} is not in cuda_toolkits")
        if suffix == "f" and sm not in fam_of:
            c.err(path + ("name",), f"{name} is family-specific but sm_{sm} is in no family")
    for name, i in names.items():
        sm, suffix = parse_target(name)
        if suffix and f"sm_{sm}" not in names:
            c.err(("targets", i, "name"), f"{name} needs the baseline target sm_{sm}")
        arch = d["targets"][i].get("ptxas_arch")
        if arch is not None and arch not in names:
            c.err(("targets", i, "ptxas_arch"), f"unknown target {arch!r}")
    for i, fam in enumerate(d["families"]):
        for sm in fam["members"]:
            if sm not in sms:
                c.err(("families", i, "members"), f"no target sm_{sm}")
    prev: tuple[tuple[int, int], str] | None = None
    for i, row in enumerate(d.get("cuda_toolkits", {}).get("versions", [])):
        path = ("cuda_toolkits", "versions", i)
        c.version(path + ("ptx_isa",), row["ptx_isa"], versions)
        cuda = vkey(row["cuda"])
        if prev is not None and (cuda <= prev[0] or
                                 vkey(row["ptx_isa"]) < vkey(prev[1])):
            c.err(path, "toolkits must be in ascending order, with PTX ISA versions that "
                        "never decrease")
        prev = (cuda, row["ptx_isa"])
    for i, r in enumerate(d.get("renames", [])):
        c.note_ref(("renames", i, "note"), r.get("note"))
        c.version(("renames", i, "version"), r["version"], versions)
        for k in ("from", "to"):
            if r[k] not in sms:
                c.err(("renames", i, k), f"no target sm_{r[k]}")
    return c.errors


def check_targets(docs: list[Document]) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    for doc in docs:
        errors.extend(_check_targets(doc))
    if len(docs) > 1:
        errors.extend(d.source.diag((), f"only one targets spec is allowed (also "
                                        f"{docs[0].display})") for d in docs[1:])
    return errors


def find_targets(doc: Document, loaded: Sequence[Document] = ()) -> Document | None:
    """The ``targets.yaml`` of the spec folder an instruction file lives in (one of
    ``loaded`` if it is among them, so that it is read once)."""
    for parent in doc.path.resolve().parents:
        candidate = parent / TARGETS_FILE
        if candidate.is_file():
            for d in loaded:
                if d.path.resolve() == candidate:
                    return d
            rel = doc.rel.split("/")[0] + "/" + TARGETS_FILE
            return load_file(candidate, str(candidate), rel)
        if parent.name == "spec":
            break
    return None


# -- instructions -----------------------------------------------------------

@dataclass(frozen=True)
class TargetsInfo:
    """What the instruction checks read from ``targets.yaml``: its versions, target names
    (for selectors) and toolkits."""

    versions: tuple[str, ...]
    names: frozenset[str]
    toolkit_names: tuple[str, ...]

    @staticmethod
    def read(data: Mapping[str, Any]) -> TargetsInfo:
        """Raises KeyError, TypeError or ValueError for data that is not a targets spec."""
        names = frozenset(t["name"] for t in data["targets"])
        toolkits = tuple(r["cuda"] for r in data.get("cuda_toolkits", {}).get("versions", ()))
        return TargetsInfo(tuple(data["ptx_isa_versions"]), names, toolkits)


@dataclass(frozen=True)
class InstructionChecks:
    """The problems the instruction checks found, the targets.yaml they read (None when it
    has problems of its own) and the instruction entries that passed every check: the
    model checks (:mod:`ptxgen.model.checks`) go on with those."""

    errors: tuple[Diagnostic, ...]
    targets: Document | None
    passed: tuple[tuple[Document, int], ...]


class _InstrChecker(_Checker):
    def __init__(self, doc: Document, targets: TargetsInfo | None) -> None:
        super().__init__(doc)
        self.targets = targets

    def condition(self, path: Path_, cond: Mapping[str, Any] | None,
                  domains: Mapping[str, tuple[str, ...]]) -> None:
        for name, raw in (cond or {}).items():
            if name not in domains:
                self.err(path + (name,), f"{name!r} is neither a qualifier nor an operand "
                                         f"choice (known: {', '.join(domains)})", key=True)
                continue
            try:
                values, _ = condition_values(raw)
            except ValueError as exc:
                self.err(path + (name,), str(exc))
                continue
            bad = sorted(v for v in values if v not in domains[name])
            if bad:
                self.err(path + (name,), f"{name}: {', '.join(bad)} is not a value of "
                                         f"{name} ({', '.join(domains[name])})")

    def value_spec(self, path: Path_, spec: Any, domains: Mapping[str, tuple[str, ...]]) -> None:
        if not isinstance(spec, dict):
            return
        if "by" in spec:
            by = spec["by"]
            if by not in domains:
                self.err(path + ("by",), f"{by!r} is not a qualifier or operand choice")
                return
            for k, v in spec["values"].items():
                if norm(k) not in domains[by]:
                    self.err(path + ("values", k), f"{k} is not a value of {by} "
                                                   f"({', '.join(domains[by])})", key=True)
                self.value_spec(path + ("values", k), v, domains)
            if "default" in spec:
                self.value_spec(path + ("default",), spec["default"], domains)
        if "div" in spec and spec["div"][0] not in domains:
            self.err(path + ("div",), f"{spec['div'][0]!r} is not a qualifier")

    def selectors(self, path: Path_, sels: list[str]) -> None:
        if self.targets is None:
            return
        for j, s in enumerate(sels):
            exc = selector_problem(s, self.targets.names)
            if exc is not None:
                self.err(path + (j,), f"target selector {s!r}: {exc}".replace('"', ""))

    def instruction(self, base: Path_, raw: Mapping[str, Any]) -> None:
        versions = self.targets.versions if self.targets else ()
        self.ident(base + ("id",), raw["id"], "instruction id", "instruction")
        self.provenance(base + ("provenance",), raw["provenance"])
        domains: dict[str, tuple[str, ...]] = {}
        for i, q in enumerate(raw["qualifiers"]):
            p = base + ("qualifiers", i)
            self.qualifier(p, q, domains)
        qual_domains = dict(domains)
        for i, o in enumerate(raw["operands"]):
            p = base + ("operands", i)
            if o["name"] in domains or o["name"] in [x["name"] for x in raw["operands"][:i]]:
                self.err(p + ("name",), f"duplicate name {o['name']!r}")
            self.ident(p + ("name",), o["name"], "operand name", "operand")
            self.provenance(p + ("provenance",), o.get("provenance"))
            if "choice" in o:
                alts = [a["name"] for a in o["choice"]]
                for j, alt in enumerate(alts):
                    self.ident(p + ("choice", j, "name"), alt, "operand name", "operand")
                if len(set(alts)) != len(alts):
                    self.err(p + ("choice",), "duplicate alternative names")
                domains[o["name"]] = tuple(alts)
            elif o.get("optional"):
                domains[o["name"]] = (FALSE, TRUE)
            kind = o.get("kind")
            if kind == "vector" and "count" not in o and not _counted(raw, o["name"]):
                self.err(p, f"vector operand {o['name']!r} needs a count (here or in every "
                            "combination)")
            if kind in ("register", "address", "vector") and "type" not in o:
                self.err(p, f"operand {o['name']!r} needs a register type")
            if kind == "immediate" and "values" not in o:
                self.err(p, f"immediate operand {o['name']!r} needs its values")
            if o.get("immediate_overload") and (
                    kind != "register" or o.get("immediate") != "allowed"
                    or "immediate_values" not in o):
                self.err(p + ("immediate_overload",), f"operand {o['name']!r}: an immediate "
                         "overload needs a register operand with immediate: allowed and its "
                         "immediate_values")
            if o.get("in_tensor"):
                # after the tensor operand or another in_tensor operand: [map, a, {b}, {coords}]
                before = raw["operands"][i - 1] if i else None
                if (before is None or not (before.get("kind") == "tensor"
                                           or before.get("in_tensor"))
                        or kind not in ("register", "vector")
                        or o.get("io", "in") != "in" or o.get("optional")
                        or o.get("immediate")):
                    self.err(p + ("in_tensor",), f"in_tensor operand {o['name']!r} must be "
                             "an input register or vector (no immediate) that follows a "
                             "tensor operand or another in_tensor operand")
            if o.get("joined"):
                before = raw["operands"][i - 1] if i else None
                # it may have a `when` (.phase_type::primary's waitComplete|isReportSeen)
                # or be optional (setp's p[|q]); the output it is joined to is always there
                if (before is None or o.get("io") != "out" or before.get("io") != "out"
                        or kind != "predicate"
                        or before.get("optional") or before.get("when")):
                    self.err(p + ("joined",), f"joined operand {o['name']!r} must be a "
                             "predicate output that follows an output that is always "
                             "there (d|p)")
        for i, o in enumerate(raw["operands"]):
            p = base + ("operands", i)
            self.condition(p + ("when",), o.get("when"), domains)
            for key in ("type", "count", "values"):
                self.value_spec(p + (key,), o.get(key), domains)
            for j, a in enumerate(o.get("choice", [])):
                for key in ("type", "count"):
                    self.value_spec(p + ("choice", j, key), a.get(key), domains)
            for j, e in enumerate(o.get("elements", [])):
                self.value_spec(p + ("elements", j, "values"), e["values"], domains)
        for i, q in enumerate(raw["qualifiers"]):
            for j, a in enumerate(q.get("aliases", [])):
                pa = base + ("qualifiers", i, "aliases", j)
                self.condition(pa + ("when",), a["when"], domains)
                self.note_ref(pa + ("note",), a.get("note"))
                for key in ("value", "same_as"):
                    if norm(a[key]) not in qual_domains[q["name"]]:
                        self.err(pa + (key,), f"{a[key]} is not a value of {q['name']}")
            for j, dname in enumerate(q.get("derived", [])):
                if dname not in qual_domains or dname == q["name"]:
                    self.err(base + ("qualifiers", i, "derived", j),
                             f"{dname!r} is not another qualifier")
        self.spelling(base, raw, qual_domains)
        gate_ids = {g["id"] for g in raw.get("gates", [])}
        for i, dev in enumerate(raw.get("deviations", [])):
            for k, gid in enumerate(dev.get("replaces", [])):
                if gid not in gate_ids:
                    self.err(base + ("deviations", i, "replaces", k),
                             f"{gid!r} is not a gate of this instruction")
            for k, tk in enumerate(dev["toolkits"]):
                if self.targets is not None and tk not in self.targets.toolkit_names:
                    self.err(base + ("deviations", i, "toolkits", k),
                             f"toolkit {tk} is not in cuda_toolkits (spec/targets.yaml)")
        for key in ("combinations", "rules", "gates", "deviations", "wrappers", "seed_syntax"):
            seen: set[str] = set()
            for i, item in enumerate(raw.get(key, [])):
                p = base + (key, i)
                ident = item.get("id", item.get("name"))
                if ident is not None:
                    if ident in seen:
                        self.err(p, f"duplicate {key[:-1]} {ident!r}")
                    seen.add(ident)
                self.condition(p + ("match" if key == "combinations" else "when",),
                               item.get("match", item.get("when")), domains)
                for sub in ("require", "forbid", "ptxas_accepts"):
                    self.condition(p + (sub,), item.get(sub), domains)
                for j, n in enumerate(item.get("equal", [])):
                    if n not in domains:
                        self.err(p + ("equal", j), f"{n!r} is not a qualifier")
                self.provenance(p + ("provenance",), item.get("provenance"))
                self.selectors(p + ("targets",), item.get("targets", []))
                if versions:
                    self.version(p + ("since",), item.get("since"), versions)
                for t, v in item.get("later", {}).items():
                    if self.targets is not None and t not in self.targets.names:
                        self.err(p + ("later", t), f"no target {t!r}", key=True)
                    if versions:
                        self.version(p + ("later", t), v, versions)
                for name, spec in item.get("operands", {}).items():
                    if name not in {o["name"] for o in raw["operands"]}:
                        self.err(p + ("operands", name), f"no operand {name!r}", key=True)
                    self.value_spec(p + ("operands", name), spec, domains)
        for i, o in enumerate(raw["operands"]):
            for j, vg in enumerate(o.get("value_gates", [])):
                p = base + ("operands", i, "value_gates", j)
                if o.get("kind") != "immediate":
                    self.err(p, f"operand {o['name']!r}: value gates need an immediate operand")
                self.condition(p + ("when",), vg.get("when"), domains)
                self.value_spec(p + ("values",), vg["values"], domains)
                self.provenance(p + ("provenance",), vg.get("provenance"))
                self.selectors(p + ("targets",), vg.get("targets", []))
                if versions:
                    self.version(p + ("since",), vg.get("since"), versions)
        for i, ex in enumerate(raw.get("examples", [])):
            self.note_ref(base + ("examples", i, "note"), ex.get("note"))
        # an operand or an alternative of a choice operand may be a descriptor word
        linked: list[tuple[tuple[int | str, ...], Mapping[str, Any]]] = []
        for i, o in enumerate(raw["operands"]):
            linked.append(((i,), o))
            linked += [((i, "choice", j), a) for j, a in enumerate(o.get("choice", ()))]
        described = {o["name"]: o["descriptor"] for _, o in linked if "descriptor" in o}
        for at, o in linked:
            kind_of = o.get("descriptor", {}).get("kind")
            if kind_of is not None and kind_of not in qual_domains:
                self.err(base + ("operands", *at, "descriptor", "kind"),
                         f"{kind_of!r} is not a qualifier")
        seen_ids: set[str] = set()
        for i, r in enumerate(raw.get("descriptor_rules", [])):
            p = base + ("descriptor_rules", i)
            if r["id"] in seen_ids:
                self.err(p + ("id",), f"duplicate descriptor rule {r['id']!r}")
            seen_ids.add(r["id"])
            if r["operand"] not in described:
                self.err(p + ("operand",), f"{r['operand']!r} is not a descriptor operand "
                         f"(one with `descriptor`: {', '.join(described) or 'none'})")
            self.condition(p + ("when",), r["when"], domains)
            self.provenance(p + ("provenance",), r.get("provenance"))
            for key in ("targets", "except_targets"):
                self.selectors(p + (key,), r.get(key, []))

    def spelling(self, base: Path_, raw: Mapping[str, Any],
                 qual_domains: Mapping[str, tuple[str, ...]]) -> None:
        """The qualifiers ``spelling`` names exist (with the values it names); the sets of
        ``alias_names`` name qualifiers and their values."""
        sp = raw.get("spelling", {})
        p = base + ("spelling",)
        named: list[tuple[Path_, str, list[Any]]] = []
        for j, item in enumerate(sp.get("fixed", [])):
            if isinstance(item, str):
                named.append((p + ("fixed", j), item, []))
            else:
                named.append((p + ("fixed", j, "qualifier"), item["qualifier"], item["values"]))
        for j, group in enumerate(sp.get("ordered", [])):
            named += [(p + ("ordered", j, k), q, []) for k, q in enumerate(group)]
        named += [(p + ("loose", j), q, []) for j, q in enumerate(sp.get("loose", []))]
        for j, alias in enumerate(raw.get("alias_names", [])):
            named += [(base + ("alias_names", j, "sets", q), q, [v])
                      for q, v in alias.get("sets", {}).items()]
        for where, q, values in named:
            if q not in qual_domains:
                self.err(where, f"{q!r} is not a qualifier of this instruction")
                continue
            for v in values:
                if norm(v) not in qual_domains[q]:
                    self.err(where, f"{v!r} is not a value of {q}")

    def qualifier(self, p: Path_, q: Mapping[str, Any],
                  domains: dict[str, tuple[str, ...]]) -> None:
        name = q["name"]
        if name in domains:
            self.err(p + ("name",), f"duplicate qualifier {name!r}")
        self.ident(p + ("name",), name, "qualifier name", "operand")
        self.provenance(p + ("provenance",), q["provenance"])
        flag = bool(q.get("flag"))
        bad = _PTX_TEXT.sub("", q["text"].replace("{}", ""))
        if bad:
            self.err(p + ("text",), f"{printable(bad[0])!r} cannot be part of a PTX opcode "
                     "(ptxas and the generated C++ strings take letters, digits, '_', '.' "
                     "and ':'; {} for the value)")
        if flag == ("{}" in q["text"]):
            self.err(p + ("text",), "a flag's text has no {}; a valued qualifier's text has one")
        if flag and ("values" in q or "optional" in q):
            self.err(p, "a flag takes no values and is optional by nature")
        if not flag and "values" not in q:
            self.err(p, f"qualifier {name!r} needs its values (or flag: true)")
            domains[name] = ()
            return
        if flag:
            domains[name] = (FALSE, TRUE)
            return
        raw = q["values"]
        if isinstance(raw, dict):
            vals = range_values(raw)
            if vals is None:
                self.err(p + ("values",), "a qualifier's value range needs 'to'")
                vals = ()
        else:
            vals = tuple(raw)
        normed = [norm(v) for v in vals]
        for k, v in enumerate(normed):
            if _PTX_TEXT.sub("", v):
                self.err(p + ("values",) + ((k,) if isinstance(raw, list) else ()),
                         f"value {printable(v, 40)!r}: "
                         f"{printable(_PTX_TEXT.sub('', v)[0])!r} cannot be part of a PTX "
                         "opcode (letters, digits, '_', '.' and ':' only)")
        if len(set(normed)) != len(normed):
            self.err(p + ("values",), "duplicate values")
        if NONE in normed:
            self.err(p + ("values",), f"{NONE!r} is reserved for a left-out qualifier")
        domains[name] = ((NONE,) if q.get("optional") else ()) + tuple(normed)


# what a qualifier's text and values may hold: PTX opcode characters only (quotes, ';',
# spaces, '\' and the like would end the opcode or the C++ string it is written in)
_PTX_TEXT = re.compile(r"[A-Za-z0-9_.:]+")


def _counted(raw: Mapping[str, Any], operand: str) -> bool:
    combos = raw.get("combinations", [])
    return bool(combos) and all(operand in c.get("operands", {}) for c in combos)


def check_instructions(docs: list[Document], loaded: Sequence[Document] = ()
                       ) -> InstructionChecks:
    """Check the instruction files ``docs``; ``loaded``: every document of the spec (the
    targets.yaml among them is not read again)."""
    errors: list[Diagnostic] = []
    if not docs:
        return InstructionChecks((), None, ())
    targets: TargetsInfo | None = None
    tdoc = find_targets(docs[0], loaded)
    if tdoc is None:
        errors.append(docs[0].source.diag((), f"no {TARGETS_FILE} found next to the "
                                              "instruction specs (target selectors need it)"))
    elif not _check_targets(tdoc):
        try:
            targets = TargetsInfo.read(tdoc.data)
        except (KeyError, TypeError, ValueError):  # reported by the targets checks
            targets = None
    ids: dict[str, str] = {}
    wrappers: dict[str, str] = {}
    passed: list[tuple[Document, int]] = []
    for doc in docs:
        c = _InstrChecker(doc, targets)
        c.collect_notes(doc.data)
        for i, raw in enumerate(doc.data["instructions"]):
            base: Path_ = ("instructions", i)
            # names may repeat (mov: special registers, copies, packs), ids may not
            if raw["id"] in ids:
                c.err(base + ("id",), f"instruction {raw['id']!r} is also defined in "
                                      f"{ids[raw['id']]}")
            ids[raw["id"]] = doc.display
            for j, w in enumerate(raw["wrappers"]):
                if w["name"] in wrappers:
                    c.err(base + ("wrappers", j, "name"),
                          f"wrapper {w['name']!r} is also defined in {wrappers[w['name']]}")
                wrappers[w["name"]] = doc.display
                c.ident(base + ("wrappers", j, "name"), w["name"], "wrapper name", "instruction")
            before = len(c.errors)
            c.instruction(base, raw)
            if len(c.errors) == before and targets is not None:
                passed.append((doc, i))
        errors.extend(c.errors)
    return InstructionChecks(tuple(errors), tdoc if targets is not None else None,
                             tuple(passed))


def instruction_docs_dir(spec_dir: Path) -> Path:
    return spec_dir / "instructions"
