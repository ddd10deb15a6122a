"""What only the built model can check, reported at the spec's ``file:line:col`` like
every validation error. Runs on what validation passed (:class:`ptxgen.validate.Validated`):

* instructions: the properties of the derived form set, for every instruction entry
  that passed its own checks: every form supported somewhere, every opcode text read
  back as exactly one qualifier assignment, every form in exactly one combination and
  one wrapper, derived qualifiers that really are functions of the qualifiers they
  name, and seed syntax blocks and examples that match;
* descriptor links (once everything above passed): an operand with ``descriptor:
  {name, kind}`` names a descriptor of ``spec/descriptors`` and the qualifier whose
  values are its MMA kinds; the ``descriptor_rules`` on it name fields of that
  descriptor and values of them;
* descriptor versions (once everything above passed): a descriptor exists from the
  first PTX ISA version at which an instruction that consumes it is supported on some
  target: ``since.version`` must be exactly the first version of any form of
  ``since.consumers`` that takes the operand, and ``since.kinds[].version`` the first
  version of those forms that match the kind's ``when``. Where the instruction spec
  links an operand to the descriptor (``operand.descriptor``), that operand is a
  consumer as well. A descriptor without ``since`` exists at every version (revisions
  of the spec from before ``since`` validate as they did).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from ptxgen.errors import Diagnostic
from ptxgen.load import Document, Path_
from ptxgen.model.descriptors import Descriptor, DescriptorBuilder, Field, Layout
from ptxgen.model.instructions import (
    Condition,
    Form,
    Instruction,
    SpecValueError,
    build_instruction,
    build_instruction_set,
)
from ptxgen.model.targets import Targets, build_targets
from ptxgen.model.versions import first_version
from ptxgen.names import did_you_mean, identifier_clashes, instruction_identifiers
from ptxgen.spec_util import norm, vkey
from ptxgen.validate import DESCRIPTOR_SCHEMA, INSTRUCTIONS_SCHEMA, TARGETS_SCHEMA, Validated


def check_model(validated: Validated) -> list[Diagnostic]:
    """The problems the model shows, for what passed validation (see the module doc)."""
    errors: list[Diagnostic] = []
    targets: Targets | None = None
    if validated.targets is not None:
        try:
            targets = build_targets(validated.targets.data)
        except (KeyError, TypeError, ValueError):  # reported by the targets checks
            targets = None
    if targets is not None:
        built: list[tuple[Document, Path_, Instruction]] = []
        for doc, i in validated.instructions:
            c = _Reporter(doc, targets)
            base: Path_ = ("instructions", i)
            try:
                ins = build_instruction(doc.data["instructions"][i], targets, doc.rel)
                _derived_checks(c, base, ins)
                built.append((doc, base, ins))
            except (KeyError, TypeError, ValueError) as exc:
                c.err(base, f"malformed instruction spec: {exc!r}")
            errors.extend(c.errors)
        errors.extend(_identifier_clashes(built))
        errors.extend(_fence_checks(built))
    if not validated.errors and not errors:
        errors.extend(check_links(validated.of(DESCRIPTOR_SCHEMA),
                                  validated.of(INSTRUCTIONS_SCHEMA)))
    if not validated.errors and not errors:
        errors.extend(check_versions(validated.of(DESCRIPTOR_SCHEMA),
                                     validated.of(TARGETS_SCHEMA),
                                     validated.of(INSTRUCTIONS_SCHEMA)))
    return errors


def _fence_checks(built: list[tuple[Document, Path_, Instruction]]) -> list[Diagnostic]:
    """A wrapper's ``fences`` names an instruction of the spec and a vector operand of it
    whose forms write b32 registers."""
    by_id = {ins.id: ins for _, _, ins in built}
    out: list[Diagnostic] = []
    for doc, base, ins in built:
        for j, w in enumerate(ins.wrappers):
            if w.fences is None:
                continue
            path = base + ("wrappers", j, "fences")
            other = by_id.get(w.fences[0])
            if other is None:
                out.append(doc.source.diag(path + ("instruction",),
                                           f"no instruction {w.fences[0]!r} in the spec"))
                continue
            uses = [u for f in other.forms for u in f.operands if u.name == w.fences[1]]
            if not uses or any(u.kind != "vector" or u.io == "in" or u.type != "b32"
                               for u in uses):
                out.append(doc.source.diag(path + ("operand",), f"{w.fences[1]!r} is not a "
                                           f"b32 register array that {other.name} writes"))
    return out


def overload_suffixes(ins: Instruction) -> list[str]:
    """The name suffixes of a wrapper's overloads: one alternative per choice operand."""
    choices = [[a.suffix for a in o.choice] for o in ins.operands if o.choice]
    return ["".join(c) for c in itertools.product(*choices)]


def instruction_identifier_lists(instructions: Sequence[Instruction]
                                 ) -> list[tuple[str, list[tuple[str, str, bool, str]]]]:
    """(id, :func:`ptxgen.names.instruction_identifiers`) of each instruction, in order;
    the first instruction of each spec file also owns the file's shared asm statement
    functions (``<file stem>_asm<N>``)."""
    owners = []
    stems: set[str] = set()
    for ins in instructions:
        operands = [o.name for o in ins.operands] + [a.name for o in ins.operands
                                                     for a in o.choice]
        enums = [q.name for q in ins.qualifiers if not q.flag and not q.numeric]
        stem = PurePosixPath(ins.spec_file).name.removesuffix(".yaml") or None
        first = stem is not None and stem not in stems
        if stem is not None:
            stems.add(stem)
        owners.append((ins.id, instruction_identifiers(
            ins.id, enums, list(dict.fromkeys(operands)), [w.name for w in ins.wrappers],
            overload_suffixes(ins), stem if first else None)))
    return owners


def _identifier_clashes(built: list[tuple[Document, Path_, Instruction]]
                        ) -> list[Diagnostic]:
    """Two instructions (or one with itself) whose generated names clash, at the later
    instruction's id (:func:`ptxgen.names.identifier_clashes`)."""
    owners = instruction_identifier_lists([ins for _, _, ins in built])
    out = []
    for k, j, message in identifier_clashes(owners):
        doc, base, _ = built[k]
        other_doc, other_base, _ = built[j]
        line, col = other_doc.source.locate(other_base + ("id",))
        out.append(doc.source.diag(base + ("id",), f"{message} ({other_doc.display}:{line}:"
                                                   f"{col}); rename one of them"))
    return out


class _Reporter:
    """Problems of one instruction file, at data paths."""

    def __init__(self, doc: Document, targets: Targets) -> None:
        self.doc = doc
        self.targets = targets
        self.errors: list[Diagnostic] = []

    def err(self, path: Path_, msg: str, *, key: bool = False) -> None:
        self.errors.append(self.doc.source.diag(path, msg, key=key))


# -- instructions: the derived forms ---------------------------------------------------------

def _derived_checks(c: _Reporter, base: Path_, ins: Instruction) -> None:
    """Properties of the derived forms, reported at the instruction."""
    if not ins.forms:
        c.err(base + ("name",), f"{ins.name}: the rules allow no form at all")
        return
    assert c.targets is not None
    opcodes: dict[str, tuple[tuple[str, str], ...]] = {}
    for f in ins.forms:
        quals = f.values[:len(ins.qualifiers)]  # the qualifiers come first, in order
        if opcodes.setdefault(f.opcode, quals) != quals:
            c.err(base + ("qualifiers",), f"two qualifier assignments are both written "
                                          f"{f.opcode!r}")
        if not f.support.matrix(c.targets):
            c.err(base + ("gates",), f"{f.key} is valid but supported on no target at any "
                                     f"version (gates {', '.join(f.support.gates)})")
        if ins.combinations:
            n = ins.combination_count(f)
            if n != 1:
                c.err(base + ("combinations",), f"{f.key} matches {n} combinations "
                                                "(each form must match exactly one)")
        try:
            uses = f.operands
        except (KeyError, SpecValueError, ValueError, TypeError) as exc:
            c.err(base + ("operands",), f"{f.key}: operand layout undefined: {exc}")
            continue
        for u in uses:
            if u.kind == "vector" and not u.count:
                c.err(base + ("operands",), f"{f.key}: vector operand {u.name} has no count")
        wrappers = [w.name for w in ins.wrappers if w.when(f.params)]
        if len(wrappers) != 1:
            c.err(base + ("wrappers",), f"{f.key} belongs to {len(wrappers)} wrappers "
                                        f"({', '.join(wrappers) or 'none'}); exactly one needed")
    for opcode in list(opcodes)[:: max(1, len(opcodes) // 50)]:
        parses, _, _ = ins.parse_opcode(opcode)
        if len(parses) != 1:
            c.err(base + ("qualifiers",), f"{opcode!r} reads back as {len(parses)} qualifier "
                                          "assignments")
    for i, q in enumerate(ins.qualifiers):
        if not q.derived:
            continue
        seen: dict[tuple[str, ...], str] = {}
        for f in ins.forms:
            k = tuple(f.params[d] for d in q.derived)
            if seen.setdefault(k, f.params[q.name]) != f.params[q.name]:
                c.err(base + ("qualifiers", i, "derived"),
                      f"{q.name} is not fixed by {', '.join(q.derived)}: "
                      f"{dict(zip(q.derived, k, strict=True))} allows {seen[k]} and "
                      f"{f.params[q.name]}")
                break
    for i, r in enumerate(ins.descriptor_rules):
        if r.targets is None:
            continue
        # the targets of the forms the rule is about: a target selection that holds on all
        # of them or on none of them says nothing (a typo, or a rule without its condition)
        where = frozenset().union(*(f.support.targets for f in ins.forms if r.when(f.params)
                                    and r.operand in f.operand_names))
        key = "targets" if r.selectors else "except_targets"
        listed = ", ".join(t for t in c.targets.names if t in where)
        if where and not where & r.targets:
            c.err(base + ("descriptor_rules", i, key),
                  f"descriptor rule {r.id!r} holds on none of the targets of its forms "
                  f"({listed})")
        elif where and where <= r.targets:
            what = "selects all of them" if key == "targets" else "selects none of them"
            c.err(base + ("descriptor_rules", i, key),
                  f"descriptor rule {r.id!r} holds on every target of its forms: {key} "
                  f"{what} ({listed})")
    for i, (_, block, cond) in enumerate(ins.seed_syntax):
        if not any(cond(f.params) for f in ins.forms):
            c.err(base + ("seed_syntax", i), f"seed syntax block {block!r} selects no valid form")
    for i, ex in enumerate(ins.examples):
        valid = bool(ins.by_opcode.get(ex["opcode"]))
        if valid != ex["valid"]:
            c.err(base + ("examples", i, "valid"),
                  f"{ex['opcode']} is {'a valid' if valid else 'not a valid'} form, the "
                  f"example says valid: {str(ex['valid']).lower()}")


# -- descriptor links ----------------------------------------------------------------------

def _kinds(qualifier: Mapping[str, Any] | None) -> list[str]:
    if qualifier is None or isinstance(qualifier.get("values"), dict):
        return []
    return [norm(v) for v in qualifier.get("values", [])]


def _value_problem(f: Field, value: object) -> str | None:
    if f.type == "enum":
        names = [o.name for o in f.options if o.name]
        if norm(value) not in names:
            return f"{value!r} is not a value of {f.name} ({', '.join(names)})"
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        return f"{f.name} is a number: {value!r} is none"
    return None


def _shape_problem(f: Field | None, name: str, spec: Any) -> str | None:
    """Why a ``shapes`` entry cannot describe field ``f`` (None: it can)."""
    if f is None:
        return f"no field {name!r}"
    if f.type not in ("dimension", "int"):
        return f"{name} is no dimension or int field (it is {f.type}): shapes take those only"
    values = (list(range(spec["from"], spec["to"] + 1, spec.get("step", 1)))
              if isinstance(spec, dict) else list(spec))
    if not values:
        return f"{name}: the range holds no value"
    if f.type == "dimension":
        bad = [v for v in values if v % f.user_step or v > f.user_max]
        if bad:
            return f"{name} = {bad[0]} does not fit the field ({f.domain})"
    return None


def check_links(descriptor_docs: list[Document], instruction_docs: list[Document]
                ) -> list[Diagnostic]:
    descriptors = {d.name: d for d in (DescriptorBuilder(doc).build() for doc in descriptor_docs)}
    errors: list[Diagnostic] = []
    for doc in instruction_docs:
        for i, raw in enumerate(doc.data["instructions"]):
            base: tuple[str | int, ...] = ("instructions", i)
            quals = {q["name"]: q for q in raw["qualifiers"]}
            linked: dict[str, tuple[Descriptor, list[str | None]]] = {}
            # operands and alternatives of choice operands (tcgen05.mma's a_tmem)
            described: list[tuple[tuple[str | int, ...], Mapping[str, Any]]] = []
            for j, op in enumerate(raw["operands"]):
                described.append((("operands", j), op))
                described += [(("operands", j, "choice", k), a)
                              for k, a in enumerate(op.get("choice", ()))]
            links = {op["name"]: op["descriptor"] for _, op in described if "descriptor" in op}
            for at, op in described:
                link = op.get("descriptor")
                if link is None:
                    continue
                desc = descriptors.get(link["name"])
                if desc is None:
                    errors.append(doc.source.diag(base + at + ("descriptor", "name"),
                                                  f"no descriptor {link['name']!r} in the spec "
                                                  f"({', '.join(sorted(descriptors))})"))
                    continue
                kinds: list[str | None] = [None]
                if link.get("kind"):
                    kinds = list(_kinds(quals.get(link["kind"])))
                    missing = [k for k in kinds if k not in desc.all_kinds]
                    if missing:
                        errors.append(doc.source.diag(
                            base + at + ("descriptor", "kind"),
                            f"{link['kind']} values {', '.join(map(str, missing))} are not "
                            f"kinds of {desc.name} ({', '.join(desc.all_kinds)})"))
                        continue
                linked[op["name"]] = (desc, kinds)
            for j, rule in enumerate(raw.get("descriptor_rules", [])):
                if rule["operand"] not in linked:
                    continue  # reported by the instruction checks
                desc, kinds = linked[rule["operand"]]
                kind_of = links[rule["operand"]].get("kind")
                when = Condition.build(rule["when"])
                matcher = dict(when.items).get(kind_of) if kind_of else None
                kinds = [k for k in kinds if matcher is None or k is None or matcher(k)]
                for k, shape in enumerate(rule.get("shapes", [])):
                    for fname, spec in shape.items():
                        path = base + ("descriptor_rules", j, "shapes", k, fname)
                        for kind in kinds:
                            fields = {f.name: f for f in desc.first_layout(kind).fields}
                            where = f"{desc.name}" + (f" (kind {kind})" if kind else "")
                            problem = _shape_problem(fields.get(fname), fname, spec)
                            if problem:
                                errors.append(doc.source.diag(path, f"{where}: {problem}",
                                                              key=fname not in fields))
                                break
                for key, fname, values in [(k, f, v) for k in ("fields", "require")
                                           for f, v in rule.get(k, {}).items()]:
                    path = base + ("descriptor_rules", j, key, fname)
                    for kind in kinds:
                        # a field of any layout of the kind (a variant's: a rule on the
                        # targets that read the word with it)
                        fields = {f.name: f for _, lay in reversed(desc.placements(kind))
                                  if lay is not None for f in lay.fields}
                        where = f"{desc.name}" + (f" (kind {kind})" if kind else "")
                        if fname not in fields:
                            errors.append(doc.source.diag(
                                path, f"{where} has no field {fname!r}", key=True))
                            break
                        problems = [p for v in values
                                    if (p := _value_problem(fields[fname], v)) is not None]
                        if problems:
                            errors.append(doc.source.diag(path, f"{where}: {problems[0]}"))
                            break
    return errors


# -- descriptor versions -------------------------------------------------------------------

def _uses(form: Form, operand: str) -> bool:
    return operand in form.operand_names


def check_versions(descriptor_docs: list[Document], targets_docs: list[Document],
                   instruction_docs: list[Document]) -> list[Diagnostic]:
    if not targets_docs or not instruction_docs:
        return []
    tdata = targets_docs[0].data
    versions = tuple(str(v) for v in tdata["ptx_isa_versions"])
    iset = build_instruction_set(
        tdata, [(d.rel, d.data) for d in sorted(instruction_docs, key=lambda d: d.rel)])
    by_id = {i.id: i for i in iset.instructions}
    errors: list[Diagnostic] = []
    for doc in descriptor_docs:
        data = doc.data
        name = data["descriptor"]
        since = data.get("since")
        if since is None:
            continue  # exists at every version (older revisions of the spec have no since)
        errors.extend(_check(doc, name, since, versions, by_id, iset.targets))
        if not errors and data.get("variants"):
            errors.extend(_check_variants(doc, name, since, versions, by_id, iset.targets))
    return errors


def _check_variants(doc: Document, name: str, since: Mapping[str, Any],
                    versions: tuple[str, ...], by_id: Mapping[str, Instruction],
                    targets: Targets) -> list[Diagnostic]:
    """A variant exists from the first version at which a consumer form is supported on
    each of its targets (so never before the targets themselves); its targets are known
    and no other variant's; its kinds are the kinds the kind-linked consumers have on
    its targets; and it is a superset of the baseline for every kind both have (every
    word the baseline allows means the same in the variant)."""
    errors: list[Diagnostic] = []

    def err(path: Path_, msg: str) -> None:
        errors.append(doc.source.diag(path, msg))

    consumers = _consumers(name, since, by_id, doc, errors)
    desc = DescriptorBuilder(doc).build()
    owner: dict[str, str] = {}
    for vi, (raw, var) in enumerate(zip(doc.data["variants"], desc.variants, strict=True)):
        base: Path_ = ("variants", vi)
        if var.since not in versions:
            err(base + ("since",), f"PTX ISA version {var.since} is not in ptx_isa_versions "
                                   f"({versions[0]} ... {versions[-1]})")
            continue
        for ti, t in enumerate(var.targets):
            path = base + ("targets", ti)
            if t not in targets.names:
                err(path, f"unknown target {t!r}{did_you_mean(t, list(targets.names))}")
                continue
            if t in owner:
                err(path, f"{t} already has the {owner[t]} layout")
            owner[t] = var.name
            forms = [f for ins, op, _ in consumers for f in ins.forms if _uses(f, op)]
            firsts = [f.support.matrix(targets).get(t) for f in forms]
            first = min((v for v in firsts if v), key=vkey, default=None)
            if first != var.since:
                what = ", ".join(sorted({ins.name for ins, _, _ in consumers}))
                err(base + ("since",), f"{name} is consumed on {t} ({what}) "
                                       f"{'from PTX ISA ' + first if first else 'never'}, "
                                       f"not from {var.since}")
        for ins, op, _ in consumers:
            link = ins.descriptor_links.get(op)
            kind_of = link[1] if link else None
            if kind_of is None or not var.kinds:
                continue
            have = sorted({str(f.params.get(kind_of)) for f in ins.forms if _uses(f, op)
                           and any(f.support.matrix(targets).get(t) for t in var.targets
                                   if t in targets.names)}, key=str)
            if set(have) != set(var.kinds):
                err(base + ("kinds",), f"the forms of {ins.name} on {', '.join(var.targets)} "
                                       f"have the kinds {', '.join(have) or 'none'}; the "
                                       f"variant lists {', '.join(var.kinds)}")
        for lay in var.layouts:
            try:
                old = desc.layout(lay.kind)
            except (KeyError, LookupError):
                continue
            problem = _superset_problem(old, lay)
            if problem:
                path = base + (("layouts",) if lay.kind else ("fields",))
                err(path, f"{lay.class_name} must accept every word {old.class_name} accepts, "
                          f"with the same meaning: {problem}")
        del raw
    return errors


def _superset_problem(old: Layout, new: Layout) -> str | None:
    """Why ``new`` does not extend ``old`` (a baseline word keeps its meaning)."""
    for f in old.fields:
        try:
            g = new.field(f.name)
        except KeyError:
            return f"field {f.name} (bits {f.lsb}-{f.msb}) is missing"
        if g.lsb != f.lsb or g.msb < f.msb or g.type != f.type or \
                g.value_shift != f.value_shift:
            return (f"field {f.name} moved or narrowed (bits {f.lsb}-{f.msb} -> "
                    f"{g.lsb}-{g.msb})")
        a, b = f.allowed_codes, g.allowed_codes
        if b is not None and (a is None or not set(a) <= set(b)):
            return f"field {f.name} no longer allows {sorted(set(a or ()) - set(b))}"
        if f.type == "enum" and any(g.names.get(n) != v for n, v in f.names.items()):
            return f"field {f.name} renames or recodes a value"
        if f.type == "address" and g.user_max < f.user_max:
            return f"field {f.name} holds less than {f.user_max:#x}"
    if new.fixed_mask & ~old.fixed_mask or (new.fixed_value ^ old.fixed_value) & new.fixed_mask:
        return "a fixed constant differs"
    return None


def _consumers(name: str, since: Mapping[str, Any], by_id: Mapping[str, Instruction],
               doc: Document, errors: list[Diagnostic]
               ) -> list[tuple[Instruction, str, str | None]]:
    """(instruction, operand, kind qualifier) of every consumer."""
    out: list[tuple[Instruction, str, str | None]] = []
    for j, c in enumerate(since["consumers"]):
        path = ("since", "consumers", j)
        ins = by_id.get(c["instruction"])
        if ins is None:
            errors.append(doc.source.diag(path + ("instruction",),
                                          f"no instruction {c['instruction']!r} "
                                          f"(known: {', '.join(sorted(by_id))})"))
            continue
        names = {o.name for o in ins.operands} | {a.name for o in ins.operands
                                                   for a in o.choice}
        if c["operand"] not in names:
            errors.append(doc.source.diag(path + ("operand",),
                                          f"{ins.id} has no operand {c['operand']!r}"))
            continue
        out.append((ins, c["operand"], None))
    for ins in by_id.values():
        for op_name, link in ins.descriptor_links.items():
            if link[0] == name and (ins, op_name, None) not in out:
                out.append((ins, op_name, link[1]))
    return out


def _check(doc: Document, name: str, since: Mapping[str, Any], versions: tuple[str, ...],
           by_id: Mapping[str, Instruction], targets: Targets
           ) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    stated: list[tuple[tuple[str | int, ...], str]] = [(("since", "version"), since["version"])]
    stated += [(("since", "kinds", j, "version"), k["version"])
               for j, k in enumerate(since.get("kinds", ()))]
    for at, v in stated:
        if v not in versions:
            errors.append(doc.source.diag(at, f"PTX ISA version {v} is not in "
                                                f"ptx_isa_versions ({versions[0]} ... "
                                                f"{versions[-1]})"))
    prov = [since["provenance"]] + [k["provenance"] for k in since.get("kinds", ())]
    for j, p in enumerate(prov):
        if not p.get("seeds") and not p.get("ptxas"):
            where = ("since", "provenance") if j == 0 else ("since", "kinds", j - 1,
                                                            "provenance")
            errors.append(doc.source.diag(where, "a version that no seed states needs its "
                                                "ptxas evidence (provenance.ptxas)"))
    consumers = _consumers(name, since, by_id, doc, errors)
    if errors or not consumers:
        return errors
    forms = [f for ins, op, _ in consumers for f in ins.forms if _uses(f, op)]
    first = first_version(forms, targets)
    what = ", ".join(f"{ins.name} {op}" for ins, op, _ in consumers)
    if first != since["version"]:
        exists = f"exists from PTX ISA {first}" if first else "never exists"
        errors.append(doc.source.diag(("since", "version"), f"{name} is consumed by {what}, "
                                      f"which {exists}, not {since['version']}"))
    kinds = data_kinds(doc.data)
    for j, k in enumerate(since.get("kinds", ())):
        path: tuple[str | int, ...] = ("since", "kinds", j)
        if k["kind"] not in kinds:
            errors.append(doc.source.diag(path + ("kind",), f"{k['kind']!r} is not a kind of "
                                                            f"{name} ({', '.join(kinds)})"))
            continue
        try:
            when = Condition.build(k["when"])
            kforms = [f for f in forms if when(f.params)]
        except (KeyError, ValueError) as exc:
            errors.append(doc.source.diag(path + ("when",), f"not a condition on the "
                                                            f"consumers' qualifiers: {exc}"))
            continue
        kfirst = first_version(kforms, targets)
        if kfirst != k["version"]:
            errors.append(doc.source.diag(
                path + ("version",),
                f"the forms of {what} with {when.text()} "
                f"{'exist from PTX ISA ' + kfirst if kfirst else 'never exist'}, not "
                f"{k['version']}"))
    for ins, op, kind_of in consumers:
        if kind_of is None:
            continue
        later = {k["kind"]: k["version"] for k in since.get("kinds", ())}
        for kind in kinds:
            kforms = [f for f in ins.forms if _uses(f, op) and f.params.get(kind_of) == kind]
            kfirst = first_version(kforms, targets)
            want = later.get(kind, since["version"])
            if kfirst is not None and kfirst != want and vkey(kfirst) > vkey(
                    since["version"]):
                errors.append(doc.source.diag(
                    ("kinds",), f"kind {kind}: the forms of {ins.name} with {kind_of} = "
                                f"{kind} exist from PTX ISA {kfirst}; since.kinds says "
                                f"{want}"))
    return errors


def data_kinds(data: Mapping[str, Any]) -> list[str]:
    return [str(k) for k in data.get("kinds", ())]
