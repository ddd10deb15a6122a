"""The instruction model: instruction syntax, rules, gating and the forms they allow.

Built from the validated ``spec/instructions/*.yaml`` data (plain dicts, as YAML
loads them) and the targets (:mod:`ptxgen.model.targets`), and from the same data
embedded in the generated module ``ptxgen.isa.ptx``. This module imports neither
YAML nor Jinja nor JSON Schema, so ``ptxgen support`` and the generated Python
builders can use it directly.

Everything derived from the rules is computed here, once: the set of valid
forms of every instruction (qualifier values plus operand variant), the
operand layout of each form, and each form's support (the targets and the
PTX ISA version), from which the full form x target x version matrix follows.

Values of qualifiers and operand choices are kept as strings: ``"1"`` for the
integer 1, ``"true"`` / ``"false"`` for flags and optional operands, ``"none"``
for a left-out optional qualifier.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter
from typing import Any

from ptxgen.errors import printable
from ptxgen.model.spelling import AliasName, Spelling, reorder
from ptxgen.model.targets import Targets, build_targets, memoized
from ptxgen.spec_util import FALSE as FALSE
from ptxgen.spec_util import NONE as NONE
from ptxgen.spec_util import TRUE as TRUE
from ptxgen.spec_util import cached_property, condition_values, range_values
from ptxgen.spec_util import norm as norm
from ptxgen.spec_util import vkey as vkey

# ---------------------------------------------------------------------------
# conditions and value specs
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Matcher:
    """The values one name may take in a condition."""

    values: frozenset[str]
    negate: bool = False

    def __call__(self, value: str) -> bool:
        return (value in self.values) != self.negate

    @staticmethod
    def build(raw: Any) -> Matcher:
        values, negate = condition_values(raw)
        return Matcher(values, negate)

    def text(self) -> str:
        vals = sorted(self.values, key=_natural)
        inner = vals[0] if len(vals) == 1 else "{" + ", ".join(vals) + "}"
        return f"not {inner}" if self.negate else inner


@dataclass(frozen=True)
class Condition:
    items: tuple[tuple[str, Matcher], ...]

    @staticmethod
    def build(raw: Mapping[str, Any] | None) -> Condition:
        return Condition(tuple((str(k), Matcher.build(v)) for k, v in (raw or {}).items()))

    @cached_property
    def names(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.items)

    def __call__(self, form: Mapping[str, str]) -> bool:
        for k, m in self.items:  # a plain loop: conditions run ~10^5 times per spec
            if (form[k] in m.values) == m.negate:
                return False
        return True

    def text(self) -> str:
        return ", ".join(f"{k} = {m.text()}" for k, m in self.items) or "always"


@cache  # a sort key of a condition's values; pure (~2,000 calls per generate)
def _natural(s: str) -> list[tuple[int, int | str]]:
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", s) if p]


#: At most this many (qualifier, operand) choices are tried while the forms of one
#: instruction are enumerated: specs come from anyone (``ptxgen diff`` reads any git
#: revision), and 25 independent flags alone make 33 million forms. The project's spec
#: needs fewer than 10,000 for its largest instruction (tcgen05.mma).
MAX_FORM_SEARCH = 200_000


class SpecValueError(ValueError):
    """A value spec has no value for this form (the spec leaves it undefined)."""


# The normalised tables of ``by`` value specs, made once per spec dict (keyed by its
# identity; the entry keeps the dict alive so that its id is not reused). Bounded.
_BY_TABLES: dict[int, tuple[Any, dict[str, Any]]] = {}


def _by_table(spec: Mapping[str, Any]) -> dict[str, Any]:
    hit = _BY_TABLES.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    table = {norm(k): v for k, v in spec["values"].items()}
    if len(_BY_TABLES) >= 100_000:
        _BY_TABLES.clear()
    _BY_TABLES[id(spec)] = (spec, table)
    return table


def eval_spec(spec: Any, form: Mapping[str, str]) -> Any:
    """Evaluate a value spec (literal, ``by`` mapping, ``div``) for one form."""
    if isinstance(spec, dict):
        if "by" in spec:
            key = form[spec["by"]]
            table = _by_table(spec)
            if key in table:
                return eval_spec(table[key], form)
            if "default" in spec:
                return eval_spec(spec["default"], form)
            raise SpecValueError(f"no value for {spec['by']} = {key}")
        if "div" in spec:
            name, divisor = spec["div"]
            return int(form[name]) // divisor
        if "from" in spec:
            vals = range_values(spec)
            return vals if vals is not None else ("range", spec["from"], None)
    return spec


def immediate_range(spec: Any, form: Mapping[str, str]) -> Any:
    """A value spec of immediates for one form, a range ``{from, to, step}`` as a
    ``range`` (not expanded: mbarrier counts go to 2^20 - 1)."""
    if isinstance(spec, dict) and "by" in spec:
        table = {norm(k): v for k, v in spec["values"].items()}
        key = form[spec["by"]]
        if key in table:
            return immediate_range(table[key], form)
        return immediate_range(spec["default"], form) if "default" in spec else ()
    if isinstance(spec, dict) and "from" in spec and "to" in spec:
        return range(spec["from"], spec["to"] + 1, spec.get("step", 1))
    return eval_spec(spec, form)


def spec_text(spec: Any) -> str:
    """A value spec as the docs show it: ``by atype (tf32: 0, 1; otherwise 0-3)``."""
    if isinstance(spec, dict) and "by" in spec:
        parts = [f"{norm(k)}: {spec_text(v)}" for k, v in spec["values"].items()]
        if "default" in spec:
            parts.append(f"otherwise {spec_text(spec['default'])}")
        return f"by {spec['by']} (" + "; ".join(parts) + ")"
    if isinstance(spec, dict) and "div" in spec:
        return f"{spec['div'][0]} / {spec['div'][1]}"
    if isinstance(spec, dict) and "from" in spec:
        if "to" not in spec:
            return f"{spec['from']} or more"
        step = f" in steps of {spec['step']}" if spec.get("step", 1) != 1 else ""
        return f"{spec['from']}-{spec['to']}{step}"
    if isinstance(spec, list):
        return ", ".join(str(v) for v in spec)
    return str(spec)


def spec_names(spec: Any) -> set[str]:
    """The qualifier names a value spec depends on."""
    out: set[str] = set()
    if isinstance(spec, dict):
        if "by" in spec:
            out.add(spec["by"])
            for v in spec["values"].values():
                out |= spec_names(v)
            if "default" in spec:
                out |= spec_names(spec["default"])
        if "div" in spec:
            out.add(spec["div"][0])
    return out


# ---------------------------------------------------------------------------
# instructions
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Provenance:
    seeds: tuple[str, ...]
    ptxas: str | None
    note: str | None
    document: str | None = None

    @staticmethod
    def build(raw: Mapping[str, Any] | None) -> Provenance:
        raw = raw or {}
        return Provenance(tuple(raw.get("seeds", ())), raw.get("ptxas"), raw.get("note"),
                          raw.get("document"))

    @property
    def from_ptxas(self) -> bool:
        """True when no seed and no document states the rule: it was established with
        ptxas."""
        return not self.seeds and not self.document


@dataclass(frozen=True)
class Qualifier:
    name: str
    text: str
    flag: bool
    optional: bool
    values: tuple[str, ...]  # without "none"; ("true",) for a flag
    numeric: bool
    derived: tuple[str, ...]
    description: str
    provenance: Provenance
    aliases: tuple[Alias, ...] = ()
    # values ptxas accepts although the ISA has no such value (not forms of the spec)
    lenient_values: tuple[str, ...] = ()

    @property
    def domain(self) -> tuple[str, ...]:
        if self.flag:
            return (FALSE, TRUE)
        return ((NONE,) if self.optional else ()) + self.values

    @property
    def absent(self) -> str | None:
        """The value meaning "left out", or None if the qualifier is required."""
        if self.flag:
            return FALSE
        return NONE if self.optional else None

    def render(self, value: str) -> str:
        if value in (FALSE, NONE):
            return ""
        if self.flag:
            return self.text
        return self.text.replace("{}", value)


@dataclass(frozen=True)
class Alias:
    value: str
    same_as: str
    when: Condition
    condition: str
    seeds: tuple[str, ...]


@dataclass(frozen=True)
class Alternative:
    name: str
    kind: str
    type: Any
    count: Any
    description: str
    suffix: str
    # a descriptor word of spec/descriptors: (descriptor name, qualifier giving its kind)
    descriptor: tuple[str, str | None] | None = None
    text: str | None = None  # kind special: the fixed operand text (a special register)


@dataclass(frozen=True)
class Operand:
    name: str
    kind: str  # register | address | vector | predicate | immediate | immediates | choice
    type: Any
    count: Any
    io: str
    values: Any
    elements: tuple[tuple[str, Any], ...]
    optional: bool
    when: Condition
    description: str
    choice: tuple[Alternative, ...]
    provenance: Provenance
    access: str = "read"  # address operands: the instruction reads or writes the memory
    # a descriptor word of spec/descriptors: (descriptor name, qualifier giving its kind)
    descriptor: tuple[str, str | None] | None = None
    object: str | None = None  # address operands: mbarrier | shared | tensormap
    immediate: bool = False  # register operands: an immediate may replace the register
    immediate_values: Any = None  # the immediates allowed then (a value spec)
    # (toolkits, value spec, ptxas message): the immediates the ptxas of those CUDA
    # toolkits accepts instead of immediate_values ([]: none)
    immediate_deviations: tuple[tuple[tuple[str, ...], Any, str], ...] = ()
    joined: bool = False  # written d|p: joined to the operand before it with |
    # the C++ wrapper also takes the value as imm<V>, checked against immediate_values
    immediate_overload: bool = False
    in_tensor: bool = False  # written inside the tensor operand before it, after the map
    # immediate operands: values allowed only on some targets / from some version
    value_gates: tuple[ValueGate, ...] = ()
    text: str | None = None  # kind special: the fixed operand text (a special register)

    def immediates_for(self, form: Mapping[str, str], toolkit: str | None = None) -> Any:
        """The immediates ptxas of ``toolkit`` accepts for this operand in ``form`` (None:
        the ISA's, ``immediate_values``): a range, a tuple, or ("range", lo, None)."""
        spec = self.immediate_values
        for toolkits, values, _ in self.immediate_deviations:
            if toolkit in toolkits:
                spec = values
        return immediate_range(spec, form)

    @property
    def is_param(self) -> bool:
        """Whether forms differ by this operand (a choice, or optional)."""
        return bool(self.choice) or self.optional

    @property
    def domain(self) -> tuple[str, ...]:
        if self.choice:
            return tuple(a.name for a in self.choice)
        return (FALSE, TRUE)


#: Rule.lenient_for's toolkit for "the ptxas of some toolkit" (what the spec records).
ANY_TOOLKIT = "*"


@dataclass(frozen=True)
class Rule:
    id: str
    when: Condition
    require: Condition
    forbid: Condition | None
    equal: tuple[str, ...]
    message: str
    provenance: Provenance
    # Violations ptxas accepts although the rule (from a seed) refuses them ...
    ptxas_accepts: Condition | None = None
    # ... the ptxas of these toolkits only (a toolkit deviation); every toolkit's when empty
    accepts_toolkits: tuple[str, ...] = ()

    def lenient_for(self, params: Mapping[str, str], toolkit: str | None) -> bool:
        """``params`` break this rule in a way the ptxas of ``toolkit`` accepts (None: a
        toolkit the spec does not list, held to the rules every toolkit's ptxas applies;
        ANY_TOOLKIT: some toolkit's)."""
        if self.ptxas_accepts is None or not self.ptxas_accepts(params):
            return False
        return not self.accepts_toolkits or toolkit == ANY_TOOLKIT or \
            toolkit in self.accepts_toolkits

    @property
    def names(self) -> frozenset[str]:
        out = self.when.names | self.require.names | frozenset(self.equal)
        return out | self.forbid.names if self.forbid else out

    def holds(self, form: Mapping[str, str]) -> bool:
        if not self.when(form):
            return True
        if not self.require(form):
            return False
        if self.forbid is not None and self.forbid(form):
            return False
        return len({form[n] for n in self.equal}) <= 1


#: One shape of a ``shapes`` descriptor rule: the numbers each field may take together.
Shape = tuple[tuple[str, tuple[int, ...]], ...]


def shape_values(spec: Any) -> tuple[int, ...]:
    """The numbers of one field of a shape: a list, or a range ``{from, to, step}``."""
    if isinstance(spec, dict):
        return tuple(range(spec["from"], spec["to"] + 1, spec.get("step", 1)))
    if isinstance(spec, list):
        return tuple(int(v) for v in spec)
    return (int(spec),)


@dataclass(frozen=True)
class DescriptorRule:
    """A rule on the value of a descriptor operand, in the forms that match ``when``:
    fields that must take one of the ``require``d values, or (``shapes``) fields whose
    values together must be one of the listed shapes. ``fields`` narrows the rule to
    words whose fields take these values (a field the word's layout lacks: the rule does
    not apply), e.g. ``sparsity = sparse``."""

    id: str
    operand: str
    when: Condition
    require: tuple[tuple[str, tuple[str, ...]], ...]  # field -> allowed (normalised) values
    message: str
    provenance: Provenance
    shapes: tuple[Shape, ...] = ()
    # The targets on which the rule holds (None: every target), from the spec's
    # ``targets`` or ``except_targets`` selectors (kept as written for the docs).
    targets: frozenset[str] | None = None
    selectors: tuple[str, ...] = ()
    except_selectors: tuple[str, ...] = ()
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()  # field -> values it applies to

    @property
    def field_names(self) -> frozenset[str]:
        """The descriptor fields the rule reads (its conditions and requirements)."""
        return frozenset(n for n, _ in (*self.fields, *self.require)) | frozenset(
            self.shape_fields)

    def applies_to(self, fields: Mapping[str, object]) -> bool:
        """Whether the decoded ``fields`` meet the rule's ``fields`` conditions."""
        return all(norm(fields.get(n)) in vals for n, vals in self.fields)

    def applies_on(self, target: str | None) -> bool:
        """Whether the rule holds on ``target``; a rule that depends on the target is
        not checked where the target is not known (None)."""
        if self.targets is None:
            return True
        return target is not None and target in self.targets

    @property
    def where(self) -> str:
        """`` (on …)`` after a message of a rule that holds only on some targets, else
        ""."""
        return f" ({self.targets_text()})" if self.targets is not None else ""

    def targets_text(self) -> str:
        """Where the rule holds, as the spec writes it ("" for every target)."""
        if self.selectors:
            return "on " + ", ".join(self.selectors)
        if self.except_selectors:
            return "on every target but " + ", ".join(self.except_selectors)
        return ""

    @property
    def shape_fields(self) -> tuple[str, ...]:
        """The fields the shapes constrain, in the order of the first shape."""
        out: list[str] = []
        for shape in self.shapes:
            out += [n for n, _ in shape if n not in out]
        return tuple(out)

    def matches_shape(self, fields: Mapping[str, object]) -> bool:
        def num(name: str) -> object:
            value = fields.get(name)
            return int(str(value)) if str(value).isdigit() else value

        return any(all(num(n) in vals for n, vals in shape) for shape in self.shapes)

    def problems(self, fields: Mapping[str, object]) -> list[str]:
        """Why the decoded ``fields`` break this rule (empty: they do not, or the rule's
        ``fields`` conditions do not hold, or the word's layout lacks a field it reads)."""
        out: list[str] = []
        if not self.applies_to(fields) or any(n not in fields for n, _ in self.require):
            return out
        where = self.where
        if self.shapes and not self.matches_shape(fields):
            got = ", ".join(f"{n} = {fields.get(n)}" for n in self.shape_fields)
            out.append(f"{self.message}{where} ({self.operand}: {got}) [{self.id}]")
        for name, allowed in self.require:
            value = norm(fields.get(name))
            if value not in allowed:
                out.append(f"{self.message}{where} ({self.operand}: {name} = {value}; "
                           f"allowed: {', '.join(allowed)}) [{self.id}]")
        return out


@dataclass(frozen=True)
class Gate:
    id: str
    when: Condition
    targets: frozenset[str] | None
    selectors: tuple[str, ...]
    since: str | None
    provenance: Provenance
    description: str = ""
    # A deviation: a gate that only the ptxas of these toolkits applies (the ISA does not).
    toolkits: tuple[str, ...] = ()
    # A deviation that accepts more: the ISA's gates these toolkits do not apply.
    replaces: tuple[str, ...] = ()
    # (target, version): targets of the gate that have the feature only from this later
    # version
    later: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ValueGate:
    """Immediate values an operand takes besides its ``values`` only where ``gate``
    allows (in the forms its ``when`` matches)."""

    gate: Gate
    values: Any  # a value spec


@dataclass(frozen=True)
class Combination:
    id: str
    match: Condition
    operands: Mapping[str, Any]
    gate: Gate | None
    provenance: Provenance


@dataclass(frozen=True)
class Wrapper:
    name: str
    when: Condition
    # (instruction id, operand): the register array whose registers the wrapper's fence
    # overload ties after the instruction (spec ``fences``)
    fences: tuple[str, str] | None = None


@dataclass(frozen=True)
class Support:
    """Where a form is supported: these targets, from this PTX ISA version."""

    targets: frozenset[str]
    since: str | None
    gates: tuple[str, ...]
    # targets that have the form only from a later version than ``since`` (a gate's
    # ``later``: cvt .e4m3x2 on sm_89 from 8.1, on sm_90 from 7.8), sorted
    later: tuple[tuple[str, str], ...] = ()

    @property
    def since_all(self) -> str | None:
        """The version from which every target of the form has it (``since`` without
        ``later``)."""
        return max((v for _, v in self.later), key=vkey, default=self.since) \
            if self.later else self.since

    def matrix(self, targets: Targets) -> dict[str, str]:
        """{target: first PTX ISA version} for every target that supports the form
        (computed once per distinct support and targets; a fresh dict each call)."""
        out = dict(targets.matrix(self.targets, self.since))
        for t, v in self.later:
            if t in out and vkey(v) > vkey(out[t]):
                out[t] = v
        return out

    def supported(self, targets: Targets, target: str, version: str) -> bool:
        t = targets.get(target)
        return (target in self.targets and t.exists_at(version)
                and (self.since is None or vkey(version) >= vkey(self.since))
                and all(vkey(version) >= vkey(v) for n, v in self.later if n == target))


@dataclass(frozen=True)
class OperandUse:
    """One operand of one form: its resolved kind, register type and count."""

    name: str
    kind: str
    type: str | None
    count: int | None
    io: str
    values: tuple[int, ...] | tuple[str, int, None] | None
    elements: tuple[tuple[str, Any], ...]
    alternative: str | None  # the chosen alternative of a choice operand
    access: str = "read"  # address operands: the instruction reads or writes the memory
    object: str | None = None  # address operands: mbarrier | shared | tensormap
    immediate: bool = False  # a register operand that may be written as an immediate
    immediate_values: Any = None  # the immediates allowed then (None: any)
    joined: bool = False  # written joined to the operand before it with | (d|p)
    in_tensor: bool = False  # written inside the tensor operand before it: [map, this, {..}]
    # (values, gate) of the operand's value gates that apply to the form
    gated: tuple[tuple[Any, Gate], ...] = ()
    text: str | None = None  # kind special: the fixed text written (%smid); no argument


@dataclass(frozen=True)
class Form:
    """One valid form: every qualifier and operand choice has a value."""

    instruction: Instruction
    values: tuple[tuple[str, str], ...]

    @cached_property
    def params(self) -> dict[str, str]:
        return dict(self.values)

    @cached_property
    def opcode(self) -> str:
        return self.instruction.render_opcode(self.params)

    @cached_property
    def variant(self) -> tuple[tuple[str, str], ...]:
        """The operand part of the form: choices and optional operands."""
        ops = self.instruction.param_operands
        return tuple([kv for kv in self.values if kv[0] in ops]) if ops else ()

    @cached_property
    def variant_text(self) -> str:
        # made once per distinct variant of the instruction (forms share few)
        ins = self.instruction
        memo: dict[tuple[tuple[str, str], ...], str] = ins.__dict__.setdefault(
            "_variant_texts", {})
        v = self.variant
        text = memo.get(v)
        if text is None:
            text = memo[v] = variant_text(ins, v)
        return text

    @cached_property
    def support(self) -> Support:
        """Where the ISA supports the form (made once per combination and set of gates
        that apply to it: forms share it)."""
        ins = self.instruction
        params = self.params
        key = (id(self.combination), *[i for i, g in enumerate(ins.gates) if g.when(params)])
        memo: dict[tuple[Any, ...], Support] = ins.__dict__.setdefault("_support_memo", {})
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = ins.support(params, combination=self.combination)
        return hit

    def support_for(self, toolkit: str | None) -> Support:
        """Where one toolkit's ptxas accepts the form (the ISA's support with that
        toolkit's recorded deviations); ``None``: the ISA's."""
        if toolkit is None or not self.instruction.deviations:
            return self.support
        cache = self.__dict__.setdefault("_support_for", {})
        if toolkit not in cache:
            cache[toolkit] = self.instruction.support(self.params, toolkit)
        result: Support = cache[toolkit]
        return result

    @cached_property
    def combination(self) -> Combination | None:
        return self.instruction.combination_of(self.params)

    @cached_property
    def operands(self) -> tuple[OperandUse, ...]:
        return self.instruction.operand_uses(self.params, self.combination)

    @cached_property
    def operand_names(self) -> frozenset[str]:
        return frozenset(u.name for u in self.operands)

    @cached_property
    def key(self) -> str:
        v = self.variant_text
        return f"{self.opcode} [{v}]" if v else self.opcode

    def __repr__(self) -> str:
        return f"Form({self.key!r})"


def variant_text(ins: Instruction, variant: Iterable[tuple[str, str]]) -> str:
    """``a=a_tmem, disable_output_lane`` for the operand choices of a form."""
    parts = []
    for name, value in variant:
        op = ins.operand(name)
        if op.choice:
            if value != op.choice[0].name:
                parts.append(value)
        elif value == TRUE:
            parts.append(name)
    return ", ".join(parts)


@dataclass(frozen=True)
class Instruction:
    name: str
    id: str
    title: str
    description: str
    qualifiers: tuple[Qualifier, ...]
    operands: tuple[Operand, ...]
    combinations: tuple[Combination, ...]
    rules: tuple[Rule, ...]
    gates: tuple[Gate, ...]
    wrappers: tuple[Wrapper, ...]
    clobbers_memory: bool
    memory_reason: str
    provenance: Provenance
    spec_file: str
    seed_syntax: tuple[tuple[str, str, Condition], ...] = ()
    examples: tuple[Mapping[str, Any], ...] = ()
    targets: Targets | None = field(default=None, compare=False, repr=False)
    descriptor_rules: tuple[DescriptorRule, ...] = ()
    deviations: tuple[Gate, ...] = ()
    #: what of the document's forms is not in the spec yet ("": all of them are)
    partial: str = ""
    spelling: Spelling | None = None  # the written orders ptxas reads besides the ISA's
    alias_names: tuple[AliasName, ...] = ()  # other names of it (bar for barrier...aligned)

    def __repr__(self) -> str:
        return f"<Instruction {self.name} ({self.spec_file or 'embedded'})>"

    @cached_property
    def descriptor_links(self) -> dict[str, tuple[str, str | None]]:
        """(descriptor name, kind qualifier) of every operand, or alternative of a choice
        operand, that is a descriptor word of spec/descriptors, by operand name."""
        out: dict[str, tuple[str, str | None]] = {}
        for o in self.operands:
            if o.descriptor is not None:
                out[o.name] = o.descriptor
            out.update((a.name, a.descriptor) for a in o.choice if a.descriptor is not None)
        return out

    def operand_targets(self, operand: str) -> frozenset[str]:
        """The targets of the forms that take ``operand``: where a check of its value knows
        the layout and the target-dependent rules (elsewhere the target is not known)."""
        return frozenset().union(*(f.support.targets for f in self.forms
                                   if operand in f.operand_names))

    def descriptor_problems(self, form: Mapping[str, str], operand: str,
                            fields: Mapping[str, object],
                            target: str | None = None) -> list[str]:
        """The descriptor rules that the decoded ``fields`` of ``operand`` break in ``form``
        on ``target`` (None: the target is not known, and the rules that depend on it are
        not checked)."""
        return [p for r in self.descriptor_rules if r.operand == operand and r.when(form)
                and r.applies_on(target) for p in r.problems(fields)]

    # -- parameters -----------------------------------------------------------
    @cached_property
    def params(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(name, domain) of every qualifier and operand choice, in syntax order."""
        out = [(q.name, q.domain) for q in self.qualifiers]
        out += [(o.name, o.domain) for o in self.operands if o.is_param]
        return tuple(out)

    @cached_property
    def param_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.params)

    @cached_property
    def gate_names(self) -> tuple[str, ...]:
        """The parameters the ISA's gates (and combinations' gates) name."""
        names: set[str] = set()
        for g in self.gates:
            names |= g.when.names
        for c in self.combinations:
            if c.gate is not None:
                names |= c.gate.when.names
        return tuple(sorted(names))

    @cached_property
    def param_operands(self) -> frozenset[str]:
        """The operands forms differ by (choices and optional operands)."""
        return frozenset(o.name for o in self.operands if o.is_param)

    @cached_property
    def io_of(self) -> dict[str, str]:
        """{operand or alternative name: its io} (the first operand that has it)."""
        out: dict[str, str] = {}
        for o in self.operands:
            out.setdefault(o.name, o.io)
            for a in o.choice:
                out.setdefault(a.name, o.io)
        return out

    def qualifier(self, name: str) -> Qualifier:
        for q in self.qualifiers:
            if q.name == name:
                return q
        raise KeyError(name)

    def operand(self, name: str) -> Operand:
        for o in self.operands:
            if o.name == name:
                return o
        raise KeyError(name)

    # -- validity -------------------------------------------------------------
    def operand_ok(self, op: Operand, form: Mapping[str, str]) -> bool:
        """An optional operand may only be given where its condition holds."""
        return not (op.optional and form[op.name] == TRUE and not op.when(form))

    def combination_of(self, form: Mapping[str, str]) -> Combination | None:
        for c in self.combinations:
            if self._in_combination(c, form):
                return c
        return None

    @cached_property
    def _absent_outside(self) -> dict[int, tuple[tuple[str, str], ...]]:
        """Per combination (by identity), the optional qualifiers its match does not
        name, with their absent value: a form of the combination leaves them out."""
        return {id(c): tuple((q.name, q.absent) for q in self.qualifiers
                             if q.absent is not None and q.name not in c.match.names)
                for c in self.combinations}

    def _in_combination(self, c: Combination, form: Mapping[str, str]) -> bool:
        if not c.match(form):
            return False
        absent = self._absent_outside.get(id(c))
        if absent is None:  # not one of this instruction's combinations
            named = c.match.names
            absent = tuple((q.name, q.absent) for q in self.qualifiers
                           if q.absent is not None and q.name not in named)
        for name, value in absent:
            if form[name] != value:
                return False
        return True

    def violations(self, form: Mapping[str, str]) -> list[str]:
        """Why a full assignment is not a valid form (empty if it is)."""
        out = [r.message for r in self.rules if not r.holds(form)]
        for op in self.operands:
            if not self.operand_ok(op, form):
                out.append(f"operand {op.name} is not allowed here (only when {op.when.text()})")
        if self.combinations and self.combination_of(form) is None and not out:
            out.append("no valid combination of " + ", ".join(self._combination_names())
                       + " matches")
        return out

    def _combination_names(self) -> list[str]:
        names: list[str] = []
        for c in self.combinations:
            for n in c.match.names:
                if n not in names:
                    names.append(n)
        return [n for n in self.param_names if n in names]

    def is_valid(self, form: Mapping[str, str]) -> bool:
        return not self.violations(form)

    # -- enumeration ----------------------------------------------------------
    @cached_property
    def forms(self) -> tuple[Form, ...]:
        """Every valid form, in a stable order (syntax order of the values)."""
        found: dict[tuple[tuple[str, str], ...], list[Combination | None]] = {}
        for c in self.combinations or (None,):
            for values in self._search(c):
                found.setdefault(values, []).append(c)
        out = []
        for values, combs in found.items():
            f = Form(self, values)
            # The search of a combination finds exactly the valid forms in it
            # (_in_combination): what it found is known now, not derived again.
            if self.combinations:
                f.__dict__["combination"] = combs[0]
                f.__dict__["_combination_count"] = len(combs)
            out.append(f)
        return tuple(out)

    def combination_count(self, form: Form) -> int:
        """How many combinations a valid form of this instruction is in (exactly one in
        a spec that validates)."""
        n = form.__dict__.get("_combination_count")
        if n is None or form.instruction is not self:
            n = sum(self._in_combination(c, form.params) for c in self.combinations)
        result: int = n
        return result

    def _search(self, comb: Combination | None) -> Iterator[tuple[tuple[str, str], ...]]:
        names = self.param_names
        domains: list[tuple[str, ...]] = []
        matchers = dict(comb.match.items) if comb else {}
        for q_name, dom in self.params:
            if q_name in matchers:
                dom = tuple(v for v in dom if matchers[q_name](v))
            elif comb is not None:
                q = next((q for q in self.qualifiers if q.name == q_name), None)
                if q is not None and q.absent is not None:
                    dom = (q.absent,)
            domains.append(dom)
        index = {n: i for i, n in enumerate(names)}
        checks: list[list[Any]] = [[] for _ in names]
        deps: list[set[str]] = [set() for _ in names]  # the earlier names a level's checks read
        for r in self.rules:
            at = max(index[n] for n in r.names)
            checks[at].append(r.holds)
            deps[at] |= r.names
        for op in self.operands:
            if op.optional:
                names_of = op.when.names | {op.name}
                at = max(index[n] for n in names_of)
                checks[at].append(lambda f, op=op: self.operand_ok(op, f))
                deps[at] |= names_of
        # A level's checks read only its own name and some earlier ones: the values that
        # pass them are decided once per assignment of those earlier names (memo), not once
        # per partial form. The partial forms grow a level at a time, each in the order of
        # its values: the order of a depth-first search.
        reads = [tuple(sorted(index[n] for n in d - {names[i]})) for i, d in enumerate(deps)]
        partial: list[tuple[tuple[str, str], ...]] = [()]
        steps = 0
        for i, (name, here, dom) in enumerate(zip(names, checks, domains, strict=True)):
            steps += len(partial) * len(dom)  # every value of the level is a candidate
            if steps > MAX_FORM_SEARCH:
                raise SpecValueError(
                    f"{self.name}: the qualifier and operand choices make more than "
                    f"{MAX_FORM_SEARCH} candidate forms to check; ptxgen refuses specs "
                    "this large (add rules or combinations that narrow them)")
            grown: list[tuple[tuple[str, str], ...]] = []
            if not here:
                pairs = [(name, v) for v in dom]
                for p in partial:
                    grown += [(*p, pair) for pair in pairs]
                partial = grown
                continue
            memo: dict[tuple[str, ...], list[tuple[str, str]]] = {}
            read = reads[i]
            for p in partial:
                key = tuple([p[j][1] for j in read])
                allowed = memo.get(key)
                if allowed is None:
                    form = dict(p)
                    allowed = []
                    for v in dom:
                        form[name] = v
                        if all(check(form) for check in here):
                            allowed.append((name, v))
                    memo[key] = allowed
                grown += [(*p, pair) for pair in allowed]
            partial = grown
        yield from partial

    def values_where(self, cond: Condition, name: str | None) -> frozenset[str | None]:
        """The values ``name`` takes in the forms that meet ``cond`` (``{None}`` for
        ``name`` None when some form does); made once per (condition, name)."""
        memo: dict[tuple[int, str | None], tuple[Condition, frozenset[str | None]]] = \
            self.__dict__.setdefault("_values_where", {})
        hit = memo.get((id(cond), name))
        if hit is not None and hit[0] is cond:
            return hit[1]
        values = frozenset(None if name is None else f.params[name]
                           for f in self.forms if cond(f.params))
        memo[(id(cond), name)] = (cond, values)
        return values

    @cached_property
    def by_opcode(self) -> dict[str, tuple[Form, ...]]:
        out: dict[str, list[Form]] = {}
        for f in self.forms:
            out.setdefault(f.opcode, []).append(f)
        return {k: tuple(v) for k, v in out.items()}

    # -- support --------------------------------------------------------------
    def support(self, form: Mapping[str, str], toolkit: str | None = None, *,
                combination: Combination | bool | None = True) -> Support:
        """Where the form is supported: by the ISA, or (``toolkit``) by that toolkit's
        ptxas, which also applies the deviations recorded for it. ``combination``: the
        form's combination when the caller knows it (True: found here)."""
        assert self.targets is not None
        allowed = frozenset(self.targets.names)
        since: str | None = None
        used = []
        gates = list(self.gates)
        if toolkit is not None:
            mine = [d for d in self.deviations if toolkit in d.toolkits]
            dropped = {r for d in mine if d.when(form) for r in d.replaces}
            gates = [g for g in gates if g.id not in dropped] + mine
        comb = (None if not self.combinations else self.combination_of(form)
                if combination is True else combination)
        if isinstance(comb, Combination) and comb.gate is not None:
            gates.insert(0, comb.gate)
        later: dict[str, str] = {}
        for g in gates:
            if not g.when(form):
                continue
            used.append(g.id)
            if g.targets is not None:
                allowed &= g.targets
            if g.since is not None and (since is None or vkey(g.since) > vkey(since)):
                since = g.since
            for t, v in g.later:
                if t not in later or vkey(v) > vkey(later[t]):
                    later[t] = v
        return Support(allowed, since, tuple(used), _later(later, allowed, since))

    # -- text -----------------------------------------------------------------
    def render_opcode(self, form: Mapping[str, str]) -> str:
        return self.name + "".join([texts[form[name]] if form[name] in texts
                                    else q.render(form[name])
                                    for q, name, texts in self._qualifier_texts])

    def opcode_parts(self, form: Mapping[str, str]) -> tuple[str, ...]:
        """The opcode of a form as the instruction's name and each qualifier's text."""
        return (self.name, *[texts[form[name]] if form[name] in texts else q.render(form[name])
                             for q, name, texts in self._qualifier_texts])

    @cached_property
    def _qualifier_texts(self) -> tuple[tuple[Qualifier, str, dict[str, str]], ...]:
        """(qualifier, name, {value: its opcode text}) for every qualifier."""
        return tuple((q, q.name, {v: q.render(v) for v in q.domain}) for q in self.qualifiers)

    def parse_opcode(self, text: str) -> tuple[list[dict[str, str]], int, set[str]]:
        """All qualifier assignments that render as ``text``.

        Also returns how far the longest partial parse got and the qualifier
        texts that would have been accepted there (for error messages).
        """
        if not text.startswith(self.name):
            return [], 0, {self.name}
        results: list[dict[str, str]] = []
        best = [len(self.name), set()]  # type: list[Any]

        def walk(i: int, pos: int, acc: dict[str, str]) -> None:
            if pos > best[0]:
                best[0], best[1] = pos, set()
            if i == len(self.qualifiers):
                if pos == len(text):
                    results.append(dict(acc))
                elif pos == best[0]:
                    best[1].add("(end)")
                return
            q = self.qualifiers[i]
            if q.absent is not None:
                acc[q.name] = q.absent
                walk(i + 1, pos, acc)
            for v in q.values if not q.flag else (TRUE,):
                piece = q.render(v)
                if text.startswith(piece, pos):
                    acc[q.name] = v
                    walk(i + 1, pos + len(piece), acc)
                elif pos == best[0]:
                    best[1].add(piece)
            acc.pop(q.name, None)

        walk(0, len(self.name), {})
        return results, best[0], best[1]

    # -- operands -------------------------------------------------------------
    @cached_property
    def _operand_deps(self) -> tuple[tuple[str, ...], ...]:
        """Per operand, the parameters its use in a form depends on (whether it is
        there, its alternative, and every ``by``/``div`` of its type, count, values,
        elements and combination counts)."""
        out = []
        for op in self.operands:
            names = set(op.when.names) | ({op.name} if op.is_param else set())
            for spec in (op.type, op.count, op.values, op.immediate_values,
                         *(v for _, v in op.elements)):
                names |= spec_names(spec)
            for a in op.choice:
                names |= spec_names(a.type) | spec_names(a.count)
            for c in self.combinations:
                if op.name in c.operands:
                    names |= spec_names(c.operands[op.name])
            out.append(tuple(sorted(names)))
        return tuple(out)

    @cached_property
    def _operand_dep_getters(self) -> tuple[Callable[[Mapping[str, str]], Any], ...]:
        """Per operand, a function of a form giving the values of its dependencies."""
        out: list[Callable[[Mapping[str, str]], Any]] = []
        for deps in self._operand_deps:
            if not deps:
                out.append(lambda form: None)
            else:
                out.append(itemgetter(*deps))
        return tuple(out)

    @cached_property
    def _operand_uses_getter(self) -> Callable[[Mapping[str, str]], Any]:
        """A function of a form giving the values of every parameter any of its operand
        uses depends on."""
        deps = sorted(set().union(*self._operand_deps))
        return itemgetter(*deps) if deps else (lambda form: None)

    def operand_uses(self, form: Mapping[str, str],
                     comb: Combination | None) -> tuple[OperandUse, ...]:
        """The operands of a form. Each use is made once per distinct value of the
        parameters it depends on (:attr:`_operand_deps`), and the tuple of them once per
        distinct value of all those parameters: forms share both."""
        cid = id(comb)
        whole: dict[tuple[Any, ...], tuple[OperandUse, ...]] = self.__dict__.setdefault(
            "_operand_uses_memo", {})
        wkey = (cid, self._operand_uses_getter(form))
        uses = whole.get(wkey)
        if uses is None:
            uses = whole[wkey] = self._operand_uses(form, comb)
        return uses

    def _operand_uses(self, form: Mapping[str, str],
                      comb: Combination | None) -> tuple[OperandUse, ...]:
        memo: dict[tuple[Any, ...], OperandUse | None] = self.__dict__.setdefault(
            "_operand_use_memo", {})
        out = []
        cid = id(comb)
        for i, get in enumerate(self._operand_dep_getters):
            key = (i, cid, get(form))
            if key in memo:
                hit = memo[key]
            else:
                hit = memo[key] = self._operand_use(self.operands[i], form, comb)
            if hit is not None:
                out.append(hit)
        return tuple(out)

    def _operand_use(self, op: Operand, form: Mapping[str, str],
                     comb: Combination | None) -> OperandUse | None:
        if op.optional:
            if form[op.name] != TRUE:
                return None
        elif not op.when(form):
            return None
        kind, typ, count, alt, text = op.kind, op.type, op.count, None, op.text
        if op.choice:
            a = next(a for a in op.choice if a.name == form[op.name])
            kind, typ, count, alt, text = a.kind, a.type, a.count, a.name, a.text
        if comb is not None and op.name in comb.operands:
            count = comb.operands[op.name]
        return OperandUse(
            name=alt or op.name, kind=kind,
            type=None if typ is None else str(eval_spec(typ, form)),
            count=None if count is None else int(eval_spec(count, form)),
            io=op.io, values=None if op.values is None else eval_spec(op.values, form),
            elements=tuple((n, eval_spec(v, form)) for n, v in op.elements),
            alternative=alt, access=op.access, object=op.object, immediate=op.immediate,
            immediate_values=None if op.immediate_values is None
            else immediate_range(op.immediate_values, form), joined=op.joined,
            in_tensor=op.in_tensor,
            gated=tuple((immediate_range(vg.values, form), vg.gate)
                        for vg in op.value_gates if vg.gate.when(form)), text=text)

    # -- wrappers -------------------------------------------------------------
    def wrapper_of(self, form: Form) -> Wrapper:
        hit = form.__dict__.get("_wrapper")
        if hit is not None and hit[0] is self:
            result: Wrapper = hit[1]
            return result
        # decided once per assignment of the names the wrappers' conditions read
        params = form.params
        names, memo = self._wrapper_memo
        key = tuple([params[n] for n in names])
        found = memo.get(key)
        if found is None:
            found = next((w for w in self.wrappers if w.when(params)), None)
            if found is None:
                raise KeyError(f"{form.key}: no wrapper")
            memo[key] = found
        form.__dict__["_wrapper"] = (self, found)
        return found

    @cached_property
    def _wrapper_memo(self) -> tuple[tuple[str, ...], dict[tuple[str, ...], Wrapper]]:
        """The names the wrappers' conditions read, and {their values: the wrapper}."""
        names: set[str] = set()
        for w in self.wrappers:
            names |= w.when.names
        return tuple(sorted(names)), {}


def rule_targets(targets: Targets, r: Mapping[str, Any]) -> frozenset[str] | None:
    """The targets on which a descriptor rule holds: its ``targets`` selectors, every
    target but its ``except_targets``, or None (every target)."""
    if r.get("targets"):
        return frozenset().union(*(targets.select(s) for s in r["targets"]))
    if r.get("except_targets"):
        out = frozenset().union(*(targets.select(s) for s in r["except_targets"]))
        return frozenset(targets.names) - out
    return None


def build_instruction(raw: Mapping[str, Any], targets: Targets, spec_file: str = "") -> Instruction:
    """The instruction model of one instruction entry of a spec file."""
    result: Instruction = memoized((raw, targets), ("instruction", spec_file),
                                    lambda: _build_instruction(raw, targets, spec_file))
    return result



def _leniencies(q: dict[str, Any]) -> list[Any]:
    """The values of a qualifier's ptxas_leniency (one entry, or a list per toolkit set)."""
    raw = q.get("ptxas_leniency", [])
    return [v for entry in ([raw] if isinstance(raw, dict) else raw) for v in entry["values"]]

def _build_instruction(raw: Mapping[str, Any], targets: Targets,
                       spec_file: str = "") -> Instruction:
    def prov(r: Mapping[str, Any]) -> Provenance:
        """An element's provenance; without one it is the instruction's (its seed section)."""
        return Provenance.build(r.get("provenance", raw.get("provenance")))

    def gate(gid: str, r: Mapping[str, Any], when: Condition) -> Gate:
        sel = tuple(r.get("targets", ()))
        tset: frozenset[str] | None = None
        if sel:
            tset = frozenset().union(*(targets.select(s) for s in sel))
        return Gate(gid, when, tset, sel, r.get("since"), prov(r), r.get("description", ""),
                    later=tuple(sorted(r.get("later", {}).items())))

    quals = []
    for q in raw["qualifiers"]:
        vals: tuple[Any, ...]
        if q.get("flag"):
            vals = (TRUE,)
        elif isinstance(q["values"], dict):
            vals = range_values(q["values"]) or ()
        else:
            vals = tuple(q["values"])
        numeric = not q.get("flag") and all(isinstance(v, int) for v in vals)
        aliases = tuple(Alias(norm(a["value"]), norm(a["same_as"]), Condition.build(a["when"]),
                              a["condition"], tuple(a["seeds"])) for a in q.get("aliases", ()))
        quals.append(Qualifier(q["name"], q["text"], bool(q.get("flag")),
                               bool(q.get("flag") or q.get("optional")),
                               tuple(norm(v) for v in vals), numeric, tuple(q.get("derived", ())),
                               " ".join(q.get("description", "").split()), prov(q), aliases,
                               tuple(norm(v) for v in _leniencies(q))))
    ops = []
    for o in raw["operands"]:
        choice = tuple(Alternative(a["name"], a["kind"],
                                   a.get("type", "pred" if a["kind"] == "predicate" else None),
                                   a.get("count"),
                                   " ".join(a.get("description", "").split()), a.get("suffix", ""),
                                   (a["descriptor"]["name"], a["descriptor"].get("kind"))
                                   if "descriptor" in a else None, a.get("text"))
                       for a in o.get("choice", ()))
        kind = "choice" if choice else o["kind"]
        typ = o.get("type", "pred" if kind == "predicate" else None)
        io = o.get("io", "in")
        ops.append(Operand(o["name"], kind, typ, o.get("count"), io, o.get("values"),
                           tuple((e["name"], e["values"]) for e in o.get("elements", ())),
                           bool(o.get("optional")), Condition.build(o.get("when")),
                           " ".join(o.get("description", "").split()), choice, prov(o),
                           o.get("access", "read"),
                           (o["descriptor"]["name"], o["descriptor"].get("kind"))
                           if "descriptor" in o else None, o.get("object"),
                           o.get("immediate") == "allowed", o.get("immediate_values"),
                           tuple((tuple(d["toolkits"]), d["values"], d["ptxas"])
                                 for d in o.get("immediate_deviations", ())),
                           bool(o.get("joined")), bool(o.get("immediate_overload")),
                           bool(o.get("in_tensor")),
                           tuple(ValueGate(gate(g["id"], g, Condition.build(g.get("when"))),
                                           g["values"])
                                 for g in o.get("value_gates", ())), o.get("text")))
    combos = []
    for c in raw.get("combinations", ()):
        when = Condition.build(c["match"])
        g = gate(c["id"], c, when) if ("targets" in c or "since" in c) else None
        combos.append(Combination(c["id"], when, dict(c.get("operands", {})), g, prov(c)))
    rules = tuple(Rule(r["id"], Condition.build(r["when"]), Condition.build(r.get("require")),
                       Condition.build(r["forbid"]) if "forbid" in r else None,
                       tuple(r.get("equal", ())), " ".join(r["message"].split()), prov(r),
                       Condition.build(r["ptxas_accepts"]) if "ptxas_accepts" in r else None,
                       tuple(r.get("ptxas_accepts_toolkits", ())))
                  for r in raw.get("rules", ()))
    gates = tuple(gate(g["id"], g, Condition.build(g["when"])) for g in raw.get("gates", ()))
    deviations = tuple(
        dataclasses.replace(gate(d["id"], d, Condition.build(d["when"])),
                            toolkits=tuple(d["toolkits"]), replaces=tuple(d.get("replaces", ())))
        for d in raw.get("deviations", ()))
    wrappers = tuple(Wrapper(w["name"], Condition.build(w["when"]),
                             (w["fences"]["instruction"], w["fences"]["operand"])
                             if "fences" in w else None) for w in raw["wrappers"])
    clob = raw.get("clobbers", {})
    seed_syntax = tuple((s["seed"], s["block"], Condition.build(s["when"]))
                        for s in raw.get("seed_syntax", ()))
    return Instruction(
        name=raw["name"], id=raw["id"], title=raw.get("title", ""),
        description=" ".join(raw.get("description", "").split()), qualifiers=tuple(quals),
        operands=tuple(ops), combinations=tuple(combos), rules=rules, gates=gates,
        wrappers=wrappers, clobbers_memory="memory" in clob,
        memory_reason=" ".join(clob.get("memory", "").split()),
        provenance=prov(raw), spec_file=spec_file, seed_syntax=seed_syntax,
        examples=tuple(raw.get("examples", ())), targets=targets,
        partial=" ".join(raw.get("partial", "").split()),
        spelling=Spelling.build(raw.get("spelling")),
        alias_names=tuple(AliasName.build(a, raw["name"]) for a in raw.get("alias_names", ())),
        descriptor_rules=tuple(
            DescriptorRule(r["id"], r["operand"], Condition.build(r["when"]),
                           tuple((k, tuple(norm(v) for v in vs))
                                 for k, vs in r.get("require", {}).items()),
                           " ".join(r["message"].split()), prov(r),
                           tuple(tuple((k, shape_values(v)) for k, v in s.items())
                                 for s in r.get("shapes", ())),
                           rule_targets(targets, r), tuple(r.get("targets", ())),
                           tuple(r.get("except_targets", ())),
                           tuple((k, tuple(norm(v) for v in vs))
                                 for k, vs in r.get("fields", {}).items()))
            for r in raw.get("descriptor_rules", ())),
        deviations=deviations)


@dataclass(frozen=True)
class Note:
    id: str
    seeds: tuple[str, ...]
    text: str
    spec_file: str


@dataclass(frozen=True)
class InstructionSet:
    targets: Targets
    instructions: tuple[Instruction, ...]
    notes: tuple[Note, ...] = ()
    # The data it was built from: (targets data, ((spec file, instruction file data), ...)).
    data: tuple[Mapping[str, Any], tuple[tuple[str, Mapping[str, Any]], ...]] | None = field(
        default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        shown = [i.name for i in self.instructions[:8]]
        more = len(self.instructions) - len(shown)
        names = ", ".join(shown) + (f", ... ({more} more)" if more > 0 else "")
        return (f"<InstructionSet: {len(self.instructions)} instructions: {names}; "
                f"{len(self.targets.targets)} targets>")

    def get(self, ident: str) -> Instruction:
        for i in self.instructions:
            if i.id == ident:
                return i
        raise KeyError(ident)

    def for_opcode(self, text: str) -> list[Instruction]:
        """The instructions whose fixed name ``text`` starts with (longest first); a
        qualifier may follow the name with ``.`` or ``::`` (``tcgen05.wait::ld``)."""
        cands = [i for i in self.instructions
                 if text == i.name or text.startswith((i.name + ".", i.name + "::"))]
        return sorted(cands, key=lambda i: -len(i.name))


def build_instruction_set(targets_data: Mapping[str, Any],
                          files: Sequence[tuple[str, Mapping[str, Any]]]) -> InstructionSet:
    """Build from the targets spec and (spec file, data) of each instruction file."""
    targets = build_targets(targets_data)
    instrs: list[Instruction] = []
    notes: list[Note] = []
    for rel, data in files:
        for raw in data["instructions"]:
            instrs.append(build_instruction(raw, targets, rel))
        notes += [Note(n["id"], tuple(n["seeds"]), " ".join(n["text"].split()), rel)
                  for n in data.get("notes", ())]
    notes += [Note(n["id"], tuple(n["seeds"]), " ".join(n["text"].split()), "spec/targets.yaml")
              for n in targets_data.get("notes", ())]
    return InstructionSet(targets, tuple(instrs), tuple(notes), (targets_data, tuple(files)))


def form_digest(ins: Instruction) -> str:
    """A digest of every valid form of ``ins`` with its support matrix.

    The generator records it next to the data it embeds in ``ptxgen.isa.ptx``;
    a generated test recomputes it from that data, which proves the embedded
    rules reproduce the model's forms exactly.
    """
    import hashlib

    assert ins.targets is not None
    texts: dict[int, tuple[Support, str]] = {}  # forms share their support (and its text)
    lines = []
    for f in ins.forms:
        sup = f.support
        hit = texts.get(id(sup))
        if hit is None or hit[0] is not sup:
            matrix = sup.matrix(ins.targets)
            hit = texts[id(sup)] = (sup, ",".join(f"{t}@{v}" for t, v in matrix.items()))
        lines.append(f"{f.key}\t{hit[1]}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


# ---------------------------------------------------------------------------
# answering questions about an opcode (``ptxgen support``, the builders)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Lookup:
    """The result of looking an opcode up: its valid forms, or why there are none."""

    opcode: str
    instruction: Instruction | None
    forms: tuple[Form, ...]
    problems: tuple[str, ...]
    #: the ISA's spelling of the opcode when it was written otherwise (another order of
    #: its qualifiers ptxas reads, or another name of the instruction: ``bar.sync``)
    isa_opcode: str | None = None

    @property
    def valid(self) -> bool:
        return bool(self.forms)

    def __repr__(self) -> str:
        if self.valid:
            shown = ", ".join(repr(f.key) for f in self.forms[:4])
            more = f", ... {len(self.forms) - 4} more" if len(self.forms) > 4 else ""
            return f"Lookup({self.opcode!r}, valid, forms=[{shown}{more}])"
        return f"Lookup({self.opcode!r}, invalid, problems={list(self.problems)!r})"


# far above the longest form's opcode (167 characters); what is longer is refused as is
MAX_OPCODE_CHARS = 1000


def lookup(iset: InstructionSet, opcode: str) -> Lookup:
    """The valid forms written ``opcode`` (one per operand variant), or why there are none.

    Reads the qualifiers back from the text and checks every operand variant
    against the rules directly, so it does not enumerate the instruction. An opcode
    written in another order ptxas reads (the instruction's ``spelling``) or with another
    name of the instruction (``alias_names``) is the form of its ISA spelling, which the
    answer's ``isa_opcode`` names.
    """
    if len(opcode) > MAX_OPCODE_CHARS:  # refused before any work
        return Lookup(opcode, None, (), (f"{len(opcode):,} characters long; no instruction "
                                         f"form is longer than {MAX_OPCODE_CHARS:,}",))
    found = _lookup_isa(iset, opcode)
    if found.valid:
        return found
    other = _lookup_spelled(iset, opcode)
    if other is not None:
        return other
    if found.instruction is None:
        alias = _alias_problem(iset, opcode)
        if alias is not None:
            return alias
    return found


def _lookup_isa(iset: InstructionSet, opcode: str) -> Lookup:
    """:func:`lookup` of the ISA's spelling only."""
    cands = iset.for_opcode(opcode)
    if not cands:
        names = sorted(i.name for i in iset.instructions)
        head = opcode.split(".")[0]
        family = [n for n in names if n.split(".")[0] == head]
        shown = family or names[:12]
        known = ", ".join(shown) + (f", ... ({len(names)} instructions in all)"
                                    if len(shown) < len(names) else "")
        return Lookup(opcode, None, (), (f"unknown instruction{_closest_instruction(iset, opcode)}"
                                         f"; known: {known}",))
    problems: list[str] = []
    for ins in cands:
        forms = _forms_of(ins, ins.parse_opcode(opcode)[0])
        if forms:  # and those of the instructions of the same name (mov: copies, packs)
            forms += [f for other in cands if other is not ins and other.name == ins.name
                      for f in _forms_of(other, other.parse_opcode(opcode)[0])]
            return Lookup(opcode, ins, tuple(forms), ())
        problems.extend(explain(ins, opcode))
    return Lookup(opcode, cands[0], (), tuple(problems))


def _forms_of(ins: Instruction, parses: Iterable[Mapping[str, str]]) -> list[Form]:
    forms = []
    for qual in parses:
        for variant in _variants(ins, qual):
            params = {**qual, **variant}
            if ins.is_valid(params):
                forms.append(Form(ins, tuple((n, params[n]) for n in ins.param_names)))
    return forms


def _spelled(iset: InstructionSet, opcode: str) -> Iterator[tuple[Instruction, str,
                                                                   tuple[tuple[str, str], ...]]]:
    """(instruction, the ISA's order of ``opcode``, qualifiers an alias name sets) for every
    reading of ``opcode`` through another name or another order ptxas reads."""
    if len(opcode) > 400:
        return
    for ins in iset.instructions:
        texts: list[tuple[str, tuple[tuple[str, str], ...]]] = []
        for a in ins.alias_names:
            if opcode == a.name or opcode.startswith((a.name + ".", a.name + "::")):
                texts.append((a.replaces + opcode[len(a.name):], a.sets))
        if ins.spelling is not None:
            texts.append((opcode, ()))
        for text, sets in texts:
            if ins.spelling is not None:
                cands = [text, *reorder(text, ins.name, ins.qualifiers, ins.spelling)]
            else:
                cands = [text]
            for cand in cands:
                if cand != opcode or sets:
                    yield ins, cand, sets


def _lookup_spelled(iset: InstructionSet, opcode: str) -> Lookup | None:
    """The forms of ``opcode`` read through :func:`_spelled`, or None."""
    for ins, text, sets in _spelled(iset, opcode):
        parses = [p for p in ins.parse_opcode(text)[0]
                  if all(p.get(k) in (FALSE, NONE) for k, _ in sets)]
        forms = _forms_of(ins, [{**p, **dict(sets)} for p in parses])
        if forms:
            return Lookup(opcode, ins, tuple(forms), (), forms[0].opcode)
    return None


def _alias_problem(iset: InstructionSet, opcode: str) -> Lookup | None:
    """Why an opcode written with another name of an instruction is not a form of it."""
    for ins in iset.instructions:
        for a in ins.alias_names:
            if opcode == a.name or opcode.startswith((a.name + ".", a.name + "::")):
                text = a.replaces + opcode[len(a.name):]
                written = [k for k, _ in a.sets if any(p.get(k) not in (FALSE, NONE)
                                                       for p in ins.parse_opcode(text)[0])]
                if written:
                    why = [f"{a.name} is {a.replaces} with {', '.join(written)} set; "
                           f"it is not written"]
                else:
                    why = [f"{a.name} is {a.replaces} with "
                           + ", ".join(f"{k} = {v}" for k, v in a.sets) + ": "
                           + "; ".join(explain(ins, text)
                                       or [f"{text}: not a valid form"])]
                return Lookup(opcode, ins, (), tuple(why))
    return None


def _closest_instruction(iset: InstructionSet, opcode: str) -> str:
    """``" (did you mean 'OPCODE'?)"`` with the closest instruction name in place of the
    start of ``opcode`` (any case, small typos), or ``""``."""
    segments = opcode.split(".")
    completed = _completed_name(iset, segments)
    if completed:
        return f" (did you mean {printable(completed)!r}?)"
    import difflib  # only on the error path

    best, fixed = 0.0, ""
    for ins in iset.instructions:
        head = ".".join(segments[:ins.name.count(".") + 1])
        ratio = difflib.SequenceMatcher(None, head.lower(), ins.name).ratio()
        if ratio > best:
            best, fixed = ratio, ins.name + opcode[len(head):]
    return f" (did you mean {printable(fixed)!r}?)" if best >= 0.75 and fixed != opcode else ""


def _completed_name(iset: InstructionSet, segments: list[str]) -> str | None:
    """``opcode`` with the segments of an instruction's name it leaves out put back
    (``wgmma.mma_async.m64n8k16...`` -> ``wgmma.mma_async.sync.aligned.m64n8k16...``):
    of the instructions whose name holds the opcode's leading segments in order, the one
    that needs the fewest added and reads the completed text as a form; or None."""
    best: tuple[int, str] | None = None
    for ins in iset.instructions:
        name = ins.name.split(".")
        if name[0] != segments[0]:
            continue
        used = 1
        for part in name[1:]:
            if used < len(segments) and segments[used] == part:
                used += 1
        missing = len(name) - used
        if missing == 0:
            continue
        fixed = ".".join([*name, *segments[used:]])
        if (best is None or missing < best[0]) and ins.parse_opcode(fixed)[0]:
            best = (missing, fixed)
    return best[1] if best else None


def descriptor_problems(iset: InstructionSet, opcode: str, words: Mapping[str, int],
                        decode: Callable[[str, str | None, int], Mapping[str, object]],
                        target: str | None = None) -> list[str]:
    """Why descriptor operand values break the spec's ``descriptor_rules`` for the form
    written ``opcode`` (e.g. ``{"idesc": 0x08100490}``) on ``target``; empty when they do
    not. A rule that holds only on some targets is checked only with a ``target``.

    ``decode(descriptor, kind, word)`` returns the word's fields as ``ptxgen decode``
    spells them and raises ValueError for a word the descriptor refuses.
    Raises PtxFormError for an invalid opcode or an operand that is no descriptor.
    """
    if target is not None and target not in iset.targets.index:
        from ptxgen.names import did_you_mean

        raise PtxFormError(f"unknown target {target!r}"
                           f"{did_you_mean(target, iset.targets.names)}; known: "
                           f"{', '.join(iset.targets.names)}")
    found = lookup(iset, opcode)
    if not found.valid or found.instruction is None:
        raise PtxFormError(f"{opcode}: " + "; ".join(found.problems))
    ins = found.instruction
    out: list[str] = []
    for name, word in words.items():
        link = ins.descriptor_links.get(name)
        if link is None:
            known = ", ".join(ins.descriptor_links) or "none"
            raise PtxFormError(f"{ins.name}: {name} is not a descriptor operand "
                               f"(descriptor operands: {known})")
        desc, kind_of = link
        forms = [f for f in found.forms if name in f.operand_names]
        if not forms:
            raise PtxFormError(f"{opcode}: no form of it takes the operand {name}")
        for form in forms:
            kind = form.params[kind_of] if kind_of else None
            try:
                fields = decode(desc, kind, word)
            except ValueError as exc:
                problems = [f"{name}: {exc}"]
            else:
                problems = ins.descriptor_problems(form.params, name, fields, target)
            out.extend(p for p in problems if p not in out)
    return out


def word_rules(iset: InstructionSet, descriptor: str, kind: str | None
               ) -> list[DescriptorRule]:
    """The descriptor rules that hold for every word of ``descriptor`` (of MMA ``kind``),
    whichever form reads it: those of the operands reading it whose condition names no
    qualifier but the one that selects the kind (``lbo_mode = 1`` is for sm_103a; a
    sparse .kind::mxf4nvf4 word needs sparsity version v1 on sm_107). ``encode`` /
    ``decode`` with a target and the descriptor classes' ``problems`` check these; one
    rule per message (tcgen05.mma's a_desc and b_desc share theirs)."""
    out: dict[str, DescriptorRule] = {}
    for ins in iset.instructions:
        for operand, (desc, kind_of) in ins.descriptor_links.items():
            if desc != descriptor:
                continue
            for r in ins.descriptor_rules:
                names = set(r.when.names)
                if r.operand != operand or names - ({kind_of} if kind_of else set()):
                    continue
                if kind_of and kind_of in names and not r.when({kind_of: str(kind)}):
                    continue
                out.setdefault(r.message, r)
    return list(out.values())


def word_problems(iset: InstructionSet, descriptor: str, kind: str | None,
                  fields: Mapping[str, object], target: str
                  ) -> list[tuple[DescriptorRule, str]]:
    """(rule, problem) for every :func:`word_rules` rule that the decoded ``fields`` break
    on ``target``."""
    return [(r, p) for r in word_rules(iset, descriptor, kind) if r.applies_on(target)
            for p in r.problems(fields)]


def explain(ins: Instruction, opcode: str) -> list[str]:
    """Why ``opcode`` is not a valid form of ``ins``."""
    parses, pos, expected = ins.parse_opcode(opcode)
    if not parses:
        rest = opcode[pos:] or "(end)"
        exp = sorted(expected, key=_natural)
        shown = ", ".join(exp[:12]) + (", ..." if len(exp) > 12 else "")
        token = "." + rest[1:].split(".")[0] if rest.startswith(".") else rest
        from ptxgen.names import did_you_mean

        return [f"{ins.name}: cannot read {printable(rest, 60)!r} after "
                f"{printable(opcode[:pos], 60)!r}{did_you_mean(token, exp)}; "
                f"expected one of: {shown}"]
    out: list[str] = []
    for qual in parses:
        # Report the operand variant that comes closest (fewest problems, fewest
        # optional operands): its problems are the qualifiers' own.
        best = min((ins.violations({**qual, **v}) for v in _variants(ins, qual)),
                   key=len, default=["not a valid form"])
        out.extend(f"{ins.name}: {m}" for m in best or ["not a valid form"])
    return list(dict.fromkeys(out))


def _variants(ins: Instruction, qual: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """Every operand variant, those with fewer optional operands first."""
    ops = [o for o in ins.operands if o.is_param]
    combos = sorted(itertools.product(*(o.domain for o in ops)),
                    key=lambda c: sum(v == TRUE for v in c))
    for combo in combos:
        yield {o.name: v for o, v in zip(ops, combo, strict=True)}


# ---------------------------------------------------------------------------
# rendering PTX text (the Python builders)
# ---------------------------------------------------------------------------

class PtxFormError(ValueError):
    """The qualifiers or operands given to a builder do not form a valid instruction."""


def _check_imm(where: str, value: object, allowed: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise PtxFormError(f"{where}: {value!r} is not an integer immediate")
    if isinstance(allowed, tuple) and allowed[:1] == ("range",):
        lo = allowed[1]
        if value < lo:
            raise PtxFormError(f"{where}: {value} is not allowed; allowed: {lo} or more")
    elif allowed is not None and value not in allowed:
        shown = (spec_text({"from": allowed.start, "to": allowed[-1], "step": allowed.step})
                 if isinstance(allowed, range) and len(allowed) > 4
                 else ", ".join(str(v) for v in allowed))
        raise PtxFormError(f"{where}: {value} is not allowed; allowed: {shown}")
    return value


def qualifier_value(q: Qualifier, value: object) -> str:
    """The normalized value of one qualifier keyword argument."""
    if q.flag:
        if value is None:
            return FALSE
        if not isinstance(value, bool):
            raise PtxFormError(f"{q.name}: {value!r} is not allowed; allowed: True or False")
        return norm(value)
    if value is None:
        if not q.optional:
            raise PtxFormError(f"{q.name}: required; allowed: {', '.join(q.values)}")
        return NONE
    if q.numeric and (not isinstance(value, int) or isinstance(value, bool)):
        raise PtxFormError(f"{q.name}: {value!r} is not allowed; allowed: {', '.join(q.values)}")
    text = norm(value)
    if text not in q.values:
        raise PtxFormError(f"{q.name}: {value!r} is not allowed; allowed: {', '.join(q.values)}")
    return text


# PTX ISA 4.4 "Identifiers": followsym [a-zA-Z0-9_$]; identifier [a-zA-Z]{followsym}* or
# [_$%]{followsym}+ (registers such as %r1, r0, %rd2).
_IDENTIFIER = r"(?:[a-zA-Z][a-zA-Z0-9_$]*|[_$%][a-zA-Z0-9_$]+)"
# PTX ISA 4.5.1 integer constants: hexadecimal, binary, octal, decimal, optional U suffix.
_INTEGER = r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?"
IDENTIFIER_RE = re.compile(_IDENTIFIER)
# An address operand between the brackets: an identifier and an optional immediate offset,
# written +N or +-N (ptxas 13.0 refuses [r-16]: "Parsing error near '-': syntax error").
ADDRESS_RE = re.compile(rf"{_IDENTIFIER}(?:\+-?{_INTEGER})?")
_IDENTIFIER_RULE = ("a letter then letters, digits, _ or $; or _, $ or % then at least one "
                    "of those")


def _identifier(where: str, value: object) -> str:
    if not isinstance(value, str) or IDENTIFIER_RE.fullmatch(value) is None:
        raise PtxFormError(f"{where}: {value!r} is not allowed; allowed: a PTX identifier "
                           f"({_IDENTIFIER_RULE}), e.g. %r1, r0, %rd2")
    return value


def render_operand(use: OperandUse, value: object) -> str:
    """The PTX text of one operand value (a register name, a list, an immediate); every
    name must be a PTX identifier, an address an identifier with an optional +offset."""
    where = f"operand {use.name}"
    if use.kind == "sink":
        if value is not True:
            raise PtxFormError(f"{where}: {value!r} is not allowed; allowed: True (writes the "
                               f"sink _)")
        return "_"
    if use.kind == "special":  # a fixed text (a special register), chosen by name
        if value is not True:
            raise PtxFormError(f"{where}: {value!r} is not allowed; allowed: True (writes "
                               f"{use.text})")
        return str(use.text)
    if use.kind == "register" and use.immediate and isinstance(value, int) \
            and not isinstance(value, bool):
        if use.immediate_values is None:
            return str(value)
        return str(_check_imm(where, value, use.immediate_values))
    if use.kind in ("register", "predicate"):
        return _identifier(where, value)
    if use.kind == "tensor":
        if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2 \
                or isinstance(value[1], str) or not isinstance(value[1], Sequence):
            raise PtxFormError(f"{where}: expected (tensor map register, [{use.count} "
                               f"coordinate registers])")
        tmap, coords = value
        if len(coords) != use.count:
            raise PtxFormError(f"{where}: {len(coords)} coordinates given; this form takes "
                               f"{use.count}")
        return (f"[{_identifier(where + '.map', tmap)}, {{"
                + ", ".join(_identifier(f"{where}[{i}]", v) for i, v in enumerate(coords))
                + "}]")
    if use.kind == "address":
        if not isinstance(value, str) or ADDRESS_RE.fullmatch(value) is None:
            hint = (" (without the brackets: the builder writes them)"
                    if isinstance(value, str) and value.startswith("[") else "")
            raise PtxFormError(f"{where}: {value!r} is not allowed{hint}; allowed: a PTX "
                               f"identifier ({_IDENTIFIER_RULE}), optionally followed by "
                               f"+offset or +-offset (an integer), e.g. addr, %rd1+16, %rd1+-16")
        return f"[{value}]"
    if use.kind == "vector":
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise PtxFormError(f"{where}: expected a sequence of {use.count} register names")
        if len(value) != use.count:
            raise PtxFormError(f"{where}: {len(value)} registers given; this form takes "
                               f"{use.count}")
        return "{" + ", ".join(_identifier(f"{where}[{i}]", v) for i, v in enumerate(value)) + "}"
    if use.kind == "immediate":
        try:
            return str(_check_imm(where, value, use.values))
        except PtxFormError as e:
            if gated_value(use, value) is not None:
                return str(value)
            if not use.gated:
                raise
            extra = "; ".join(f"{spec_text(_as_spec(v))} {gate_text(g)}" for v, g in use.gated)
            raise PtxFormError(f"{e} ({extra})") from None
    if use.kind == "immediates":
        if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != len(
                use.elements):
            raise PtxFormError(f"{where}: expected {len(use.elements)} immediates "
                               f"({', '.join(n for n, _ in use.elements)})")
        parts = [str(_check_imm(f"{where}.{n}", v, tuple(vals) if isinstance(vals, list)
                                else vals))
                 for (n, vals), v in zip(use.elements, value, strict=True)]
        return "{" + ", ".join(parts) + "}"
    raise PtxFormError(f"{where}: unknown operand kind {use.kind}")


def _as_spec(values: Any) -> Any:
    """A resolved immediate set as a value spec (for its text)."""
    if isinstance(values, range):
        return {"from": values.start, "to": values[-1], **(
            {"step": values.step} if values.step != 1 else {})}
    return list(values) if isinstance(values, tuple) else values


def _later(later: Mapping[str, str], allowed: frozenset[str],
           since: str | None) -> tuple[tuple[str, str], ...]:
    """A support's later targets: those it has, later than its ``since``."""
    return tuple(sorted((t, v) for t, v in later.items()
                        if t in allowed and (since is None or vkey(v) > vkey(since))))


def gate_text(g: Gate) -> str:
    """Where a gate allows, in words: "on sm_100f, sm_120f from PTX ISA 8.7"."""
    parts = []
    if g.selectors:
        parts.append("on " + ", ".join(g.selectors))
    if g.since is not None:
        parts.append(f"from PTX ISA {g.since}")
    if g.later:
        parts.append("(" + ", ".join(f"{t} from {v}" for t, v in g.later) + ")")
    return " ".join(parts) + f" [{g.id}]"


def gated_value(use: OperandUse, value: object) -> Gate | None:
    """The value gate an immediate ``value`` of ``use`` falls under, if any."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    for values, g in use.gated:
        if isinstance(values, tuple) and values[:1] == ("range",):
            if value >= values[1]:
                return g
        elif value in values:
            return g
    return None


def value_support(ins: Instruction, form: Mapping[str, str], use: OperandUse, value: object,
                  toolkit: str | None = None) -> Support:
    """Where ``form`` with the immediate ``value`` of ``use`` is supported: the form's
    support, narrowed by the value gate the value falls under."""
    sup = ins.support(form, toolkit)
    g = gated_value(use, value)
    if g is None:
        return sup
    targets = sup.targets if g.targets is None else sup.targets & g.targets
    since = sup.since
    if g.since is not None and (since is None or vkey(g.since) > vkey(since)):
        since = g.since
    return Support(targets, since, (*sup.gates, g.id), _later(dict(sup.later), targets, since))


def build(ins: Instruction, args: Mapping[str, object], ptx_isa: str | None = None) -> str:
    """Render one instruction from keyword arguments; raise PtxFormError if invalid.

    Qualifiers are given by name (flags as bool, left-out optional qualifiers
    as None); operands by name, an operand with alternatives by the name of
    the alternative, optional operands only when wanted. With ``ptx_isa``, a
    form, or an immediate value (a value gate), that exists only from a later
    PTX ISA version is refused too (None: the newest version the spec knows).
    """
    params: dict[str, str] = {}
    for q in ins.qualifiers:
        params[q.name] = qualifier_value(q, args.get(q.name))
    known = {q.name for q in ins.qualifiers}
    for op in ins.operands:
        names = [a.name for a in op.choice] if op.choice else [op.name]
        known.update(names)
        given = [n for n in names if args.get(n) is not None]
        if op.choice:
            if len(given) != 1:
                raise PtxFormError(f"operand {op.name}: give exactly one of {', '.join(names)}")
            params[op.name] = given[0]
        elif op.optional:
            params[op.name] = TRUE if given else FALSE
    unknown = sorted(k for k in args if k not in known)
    if unknown:
        raise PtxFormError(f"{ins.name}: unknown argument(s) {', '.join(unknown)}")
    problems = ins.violations(params)
    if problems:
        opcode = ins.render_opcode(params)
        raise PtxFormError(f"{opcode}: not a valid form: " + "; ".join(problems))
    comb = ins.combination_of(params) if ins.combinations else None
    uses = ins.operand_uses(params, comb)
    used = {u.name for u in uses}
    for op in ins.operands:
        for n in ([a.name for a in op.choice] if op.choice else [op.name]):
            if n not in used and args.get(n) is not None:
                raise PtxFormError(f"operand {n} is not part of this form "
                                   f"(only when {op.when.text()})")
    for u in uses:
        if args.get(u.name) is None:
            raise PtxFormError(f"operand {u.name} is required by this form")
    args = _descriptor_objects(ins, params, uses, args)
    text = render_text(ins, params, uses, args)
    if ptx_isa is not None:
        _check_version(ins, params, uses, args, ptx_isa)
    return text


def _descriptor_objects(ins: Instruction, params: Mapping[str, str],
                        uses: Sequence[OperandUse], args: Mapping[str, object]
                        ) -> Mapping[str, object]:
    """The builder arguments with each descriptor operand given as (register, descriptor
    object) replaced by its register, once the object is checked against the form as the
    C++ wrappers check one (issue 28): of the operand's descriptor (an ``InstrDescF16`` for
    ``idesc``), of the form's kind, a valid word, and none of the form's descriptor rules
    broken (those that hold only on some targets are not checked: the builder knows no
    target; ``descriptor_problems(..., target=...)`` does)."""
    out = dict(args)
    for u in uses:
        value = args[u.name]
        link = ins.descriptor_links.get(u.name)
        if link is None or not isinstance(value, tuple):
            continue
        desc, kind_of = link
        where = f"{ins.name}: operand {u.name}"
        if len(value) != 2 or getattr(value[1], "DESCRIPTOR", None) != desc:
            raise PtxFormError(f"{where} takes a register name, or (register name, an object "
                               f"of ptxgen.isa.{desc}); got {value!r}")
        register, obj = value
        kind = params[kind_of] if kind_of else None
        if kind is not None and obj.KIND != kind:
            raise PtxFormError(f"{where}: the descriptor object is of .kind::{obj.KIND}, the "
                               f"form of .kind::{kind}")
        try:
            obj.encode()
        except ValueError as exc:  # DescriptorError: an invalid field
            raise PtxFormError(f"{where}: {exc}") from None
        fields = {}
        for spec in obj.FIELDS:  # as ptxgen decode spells them (an enum's name)
            number = int(getattr(obj, spec.name))
            fields[spec.name] = next((n for n, v in spec.names.items() if v == number), number)
        problems = ins.descriptor_problems(params, u.name, fields)
        if problems:
            raise PtxFormError(f"{ins.render_opcode(params)}: " + "; ".join(problems))
        out[u.name] = register
    return out


def _check_version(ins: Instruction, params: Mapping[str, str], uses: Sequence[OperandUse],
                   args: Mapping[str, object], ptx_isa: str) -> None:
    """Refuse a form or an immediate value that exists only from a later version."""
    assert ins.targets is not None
    if ptx_isa not in ins.targets.versions:
        raise PtxFormError(f"ptx_isa: {ptx_isa!r} is not a PTX ISA version the spec knows; "
                           f"allowed: {', '.join(ins.targets.versions)}")
    since = ins.support(params).since
    if since is not None and vkey(since) > vkey(ptx_isa):
        raise PtxFormError(f"{ins.render_opcode(params)}: exists from PTX ISA {since}, "
                           f"not at {ptx_isa}")
    for u in uses:
        g = gated_value(u, args.get(u.name))
        if g is not None and g.since is not None and vkey(g.since) > vkey(ptx_isa):
            raise PtxFormError(f"operand {u.name}: {args[u.name]} is allowed "
                               f"{gate_text(g)}, not at PTX ISA {ptx_isa}")


def render_text(ins: Instruction, params: Mapping[str, str], uses: Sequence[OperandUse],
                args: Mapping[str, object]) -> str:
    """The instruction text for qualifier values and operands, without any validity check
    (the builders check first; the conformance tests also render invalid forms)."""
    opcode = ins.render_opcode(params)
    texts = [render_operand(u, args[u.name]) for u in uses]
    return f"{opcode} {join_operands(uses, texts)};" if texts else f"{opcode};"


def join_operands(uses: Sequence[OperandUse], texts: Sequence[str]) -> str:
    """The operand texts of a form, separated by commas, a ``joined`` operand by ``|``
    (``d|p, membermask``), an ``in_tensor`` operand inside the tensor operand before it,
    after the tensor map (``[map, gaddr, {x, y}]``)."""
    out = texts[0] if texts else ""
    for u, t in zip(uses[1:], texts[1:], strict=True):
        if u.in_tensor:  # the tensor operand ends the text so far: [map, {coords}]
            at = out.rindex(", {")
            out = f"{out[:at]}, {t}{out[at:]}"
        else:
            out += ("|" if u.joined else ", ") + t
    return out


def python_value(q: Qualifier, value: str) -> object:
    """The builder keyword argument for a normalized qualifier value."""
    if q.flag:
        return value == TRUE
    if value == NONE:
        return None
    return int(value) if q.numeric else value


def first_allowed(values: Any) -> int:
    """A representative allowed value of an immediate (its first one)."""
    if isinstance(values, tuple) and values[:1] == ("range",):
        return int(values[1])
    if isinstance(values, dict):
        return int(values["from"])
    return int(next(iter(values)))


def sample(form: Form) -> tuple[dict[str, object], tuple[str, ...]]:
    """Builder arguments for ``form`` with registers named after the operands,
    and the PTX ``.reg`` declarations those registers need."""
    ins = form.instruction
    args: dict[str, object] = {q.name: python_value(q, form.params[q.name])
                               for q in ins.qualifiers}
    operand_args, decls = sample_operands(form.operands)
    args.update(operand_args)
    return args, decls


def sample_operands(uses: Sequence[OperandUse]) -> tuple[dict[str, object], tuple[str, ...]]:
    """Operand arguments (registers named after the operands) and their declarations."""
    args: dict[str, object] = {}
    decls: list[str] = []
    for u in uses:
        if u.kind in ("sink", "special"):
            args[u.name] = True
        elif u.kind == "tensor":
            args[u.name] = (f"{u.name}_map", [f"{u.name}{i}" for i in range(u.count or 0)])
            decls.append(f".reg .b64 {u.name}_map;")
            decls.append(f".reg .{u.type} {u.name}<{u.count}>;")
        elif u.kind in ("register", "address", "predicate"):
            args[u.name] = u.name
            decls.append(f".reg .{u.type} {u.name};")
        elif u.kind == "vector":
            args[u.name] = [f"{u.name}{i}" for i in range(u.count or 0)]
            decls.append(f".reg .{u.type} {u.name}<{u.count}>;")
        elif u.kind == "immediate":
            args[u.name] = first_allowed(u.values)
        else:
            args[u.name] = tuple(first_allowed(v) for _, v in u.elements)
    return args, tuple(decls)
