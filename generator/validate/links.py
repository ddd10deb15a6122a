"""Checks across spec files: instruction operands that are descriptor words.

An operand with ``descriptor: {name, kind}`` names a descriptor of
``spec/descriptors`` and the qualifier whose values are its MMA kinds; the
``descriptor_rules`` on it name fields of that descriptor and values of them.
Runs after the per-file checks passed, on the descriptor model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptxgen import model
from ptxgen.errors import Diagnostic
from ptxgen.instructions import Condition, norm
from ptxgen.load import Document


def _kinds(qualifier: Mapping[str, Any] | None) -> list[str]:
    if qualifier is None or isinstance(qualifier.get("values"), dict):
        return []
    return [norm(v) for v in qualifier.get("values", [])]


def _value_problem(f: model.Field, value: object) -> str | None:
    if f.type == "enum":
        names = [o.name for o in f.options if o.name]
        if norm(value) not in names:
            return f"{value!r} is not a value of {f.name} ({', '.join(names)})"
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        return f"{f.name} is a number: {value!r} is none"
    return None


def _shape_problem(f: model.Field | None, name: str, spec: Any) -> str | None:
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
    descriptors = {d.name: d for d in (model._Builder(doc).build() for doc in descriptor_docs)}
    errors: list[Diagnostic] = []
    for doc in instruction_docs:
        for i, raw in enumerate(doc.data["instructions"]):
            base: tuple[str | int, ...] = ("instructions", i)
            quals = {q["name"]: q for q in raw["qualifiers"]}
            linked: dict[str, tuple[model.Descriptor, list[str | None]]] = {}
            for j, op in enumerate(raw["operands"]):
                link = op.get("descriptor")
                if link is None:
                    continue
                desc = descriptors.get(link["name"])
                if desc is None:
                    errors.append(doc.source.diag(base + ("operands", j, "descriptor", "name"),
                                                  f"no descriptor {link['name']!r} in the spec "
                                                  f"({', '.join(sorted(descriptors))})"))
                    continue
                kinds: list[str | None] = [None]
                if link.get("kind"):
                    kinds = list(_kinds(quals.get(link["kind"])))
                    missing = [k for k in kinds if k not in desc.kinds]
                    if missing:
                        errors.append(doc.source.diag(
                            base + ("operands", j, "descriptor", "kind"),
                            f"{link['kind']} values {', '.join(map(str, missing))} are not "
                            f"kinds of {desc.name} ({', '.join(desc.kinds)})"))
                        continue
                linked[op["name"]] = (desc, kinds)
            for j, rule in enumerate(raw.get("descriptor_rules", [])):
                if rule["operand"] not in linked:
                    continue  # reported by the instruction checks
                desc, kinds = linked[rule["operand"]]
                kind_of = next(o["descriptor"].get("kind") for o in raw["operands"]
                               if o["name"] == rule["operand"])
                when = Condition.build(rule["when"])
                matcher = dict(when.items).get(kind_of) if kind_of else None
                kinds = [k for k in kinds if matcher is None or k is None or matcher(k)]
                for k, shape in enumerate(rule.get("shapes", [])):
                    for fname, spec in shape.items():
                        path = base + ("descriptor_rules", j, "shapes", k, fname)
                        for kind in kinds:
                            fields = {f.name: f for f in desc.layout(kind).fields}
                            where = f"{desc.name}" + (f" (kind {kind})" if kind else "")
                            problem = _shape_problem(fields.get(fname), fname, spec)
                            if problem:
                                errors.append(doc.source.diag(path, f"{where}: {problem}",
                                                              key=fname not in fields))
                                break
                for fname, values in rule.get("require", {}).items():
                    path = base + ("descriptor_rules", j, "require", fname)
                    for kind in kinds:
                        fields = {f.name: f for f in desc.layout(kind).fields}
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
