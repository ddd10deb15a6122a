"""The checks of ``ptxgen lint`` on one PTX module.

Every instruction of a family the spec has is looked up (:func:`ptxgen.model.instructions.
lookup`): a text that is no valid form is a ``form`` finding (with the spec's reason and
closest spelling), a valid form the module's target does not support at its ``.version`` an
``unsupported`` one (with ``toolkit``: as that toolkit's ptxas, the spec's deviations
applied). Each descriptor operand whose bits are known (:mod:`ptxgen.lint.knownbits`) is
read with the layout of the target and version: bits set in reserved ranges or fixed bits
that differ (``descriptor-reserved``), a field value the table does not have
(``descriptor-field``) and, for a word known whole, the spec's descriptor rules for the
instruction that consumes it (``descriptor-rule``: kind, shapes, .cta_group, sparsity, the
target's own fields) and, for wgmma / tcgen05.mma, the byte offsets of the shared memory
descriptors against the tile they describe (``descriptor-offset``, :mod:`ptxgen.lint.strides`).
Instructions of other families are counted, never findings, except a
name so close to one of the spec's instructions that it is a misspelling
(``unknown-instruction``, e.g. pre-release spellings such as ``elect.one.sync``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ptxgen.lint.guards import allowed
from ptxgen.lint.knownbits import Known, Values
from ptxgen.lint.ptxtext import Module, Statement
from ptxgen.lint.strides import needed, tcgen05_tile, wgmma_tile
from ptxgen.model.calls import operand_texts
from ptxgen.model.instructions import Form, InstructionSet, Lookup, lookup
from ptxgen.source import Statement as SourceStatement


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    col: int
    rule: str
    message: str
    valid: str  # what would be valid

    def text(self) -> str:
        tail = f"; valid: {self.valid}" if self.valid and self.valid not in self.message else ""
        return f"{self.file}:{self.line}:{self.col}: {self.message} [{self.rule}]{tail}"

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "col": self.col, "rule": self.rule,
                "message": self.message, "valid": self.valid}


@dataclass(frozen=True)
class Suggestion:
    """The ptxgen call that replaces one statement (``lint --suggest``)."""

    file: str
    line: int
    col: int
    opcode: str
    cpp: str
    python: str

    def text(self) -> str:
        return (f"{self.file}:{self.line}:{self.col}: {self.opcode}: C++ {self.cpp}\n"
                f"{self.file}:{self.line}:{self.col}: {self.opcode}: Python {self.python}")

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "col": self.col, "opcode": self.opcode,
                "cpp": self.cpp, "python": self.python}


@dataclass
class Counts:
    instructions: int = 0
    checked: int = 0
    skipped: int = 0
    descriptors: int = 0  # descriptor operands whose value was (partly) known
    skipped_opcodes: dict[str, int] = field(default_factory=dict)

    def add(self, other: Counts) -> None:
        self.instructions += other.instructions
        self.checked += other.checked
        self.skipped += other.skipped
        self.descriptors += other.descriptors
        for k, v in other.skipped_opcodes.items():
            self.skipped_opcodes[k] = self.skipped_opcodes.get(k, 0) + v


class Checker:
    """Checks modules against one instruction set; lookups are kept across modules."""

    def __init__(self, iset: InstructionSet, toolkit: str | None = None,
                 suggest: bool = False) -> None:
        self.iset = iset
        #: with ``suggest``, the ptxgen call of every valid statement, in order
        self.suggestions: list[Suggestion] | None = [] if suggest else None
        self.toolkit = toolkit
        self.targets = iset.targets if toolkit is None else iset.targets.for_toolkit(toolkit)
        self._lookups: dict[str, Lookup] = {}
        self._cands: dict[str, bool] = {}
        self._partials: dict[str, bool] = {}
        self._allows: dict[tuple[str, ...], dict[str, bool | None]] = {}
        self._heads = {i.name.split(".")[0] for i in iset.instructions}
        # misspellings are judged against the instructions the spec has whole
        self._names = sorted(i.name for i in iset.instructions if not i.partial)

    def _candidates(self, opcode: str) -> bool:
        hit = self._cands.get(opcode)
        if hit is None:
            hit = self._cands[opcode] = bool(self.iset.for_opcode(opcode))
        return hit

    def _partial(self, opcode: str) -> bool:
        """Whether every instruction ``opcode`` may be is one the spec has only a part of
        (``partial``): a text the spec does not read may be one of the missing forms."""
        hit = self._partials.get(opcode)
        if hit is None:
            hit = self._partials[opcode] = all(i.partial for i in self.iset.for_opcode(opcode))
        return hit

    def _skip(self, st: Statement, counts: Counts) -> None:
        head = st.opcode.split(".", 1)[0]
        counts.skipped += 1
        counts.skipped_opcodes[head] = counts.skipped_opcodes.get(head, 0) + 1

    def lookup(self, opcode: str) -> Lookup:
        hit = self._lookups.get(opcode)
        if hit is None:
            hit = self._lookups[opcode] = lookup(self.iset, opcode)
        return hit

    def check(self, path: str, module: Module, target: str | None,
              version: str | None) -> tuple[list[Finding], Counts]:
        """The findings of ``module`` (``target`` / ``version``: the module's own where
        None) and what was counted."""
        out: list[Finding] = []
        counts = Counts()
        t = target or _module_target(module)
        v = version or module.version
        t_ok = self._context(path, module, t, v, out)
        for fn in module.functions:
            values: Values | None = None
            for st in fn.statements:
                found = self._form(path, st, out, counts)
                if found is None:
                    continue
                if t_ok and t is not None and v is not None:
                    f = self._support(path, st, found, t, v)
                    if f is not None:
                        out.append(f)
                if found.instruction is not None and found.instruction.descriptor_links:
                    if values is None:
                        values = Values(fn.statements)
                    out.extend(self._descriptors(path, st, found, values, t if t_ok else None,
                                                 v, counts))
        return out, counts

    def check_source(self, path: str, statements: list[SourceStatement], target: str | None,
                     version: str | None) -> tuple[list[Finding], Counts]:
        """The findings of the inline asm ``statements`` of one source (as
        :func:`ptxgen.source.read_source` reads them). Each is checked as a form wherever
        its ``#if`` branch may be compiled; its support on ``target`` (at ``version``,
        default the newest) where the guard surely compiles it there, and without
        ``target``, whether any target the guard allows supports it."""
        out: list[Finding] = []
        counts = Counts()
        v = version or self.targets.newest
        blocks: dict[int, list[Statement]] = {}
        guards: dict[int, tuple[str, ...]] = {}
        for s in statements:
            if s.is_glue:
                continue
            blocks.setdefault(s.block, []).append(Statement(s.line, s.col, s.opcode,
                                                            s.operands))
            guards[s.block] = s.guard
        for number, block in blocks.items():
            guard = guards[number]
            allows = self._allows.get(guard)
            if allows is None:
                allows = self._allows[guard] = {t: allowed(guard, t)
                                                for t in self.targets.names}
            if not any(a is not False for a in allows.values()):
                continue  # a host-only or dead branch
            values: Values | None = None
            for st in block:
                found = self._form(path, st, out, counts)
                if found is None:
                    continue
                if target is not None:
                    f = (self._support(path, st, found, target, v)
                         if allows.get(target) is True else None)
                else:
                    f = self._guarded_support(path, st, found, allows, v)
                if f is not None:
                    out.append(f)
                if found.instruction is not None and found.instruction.descriptor_links:
                    if values is None:
                        values = Values(block)
                    out.extend(self._descriptors(path, st, found, values, target, v, counts))
        return out, counts

    def _form(self, path: str, st: Statement, out: list[Finding],
              counts: Counts) -> Lookup | None:
        """Count ``st`` and read it as a form: its valid lookup, or None (another family,
        perhaps a form a partial family lacks, or a finding appended to ``out``)."""
        counts.instructions += 1
        head = st.opcode.split(".", 1)[0]
        if head not in self._heads or not self._candidates(st.opcode):
            f = self._misspelt(path, st) if head in self._heads else None
            if f is None:
                self._skip(st, counts)
            else:
                out.append(f)
                counts.checked += 1
            return None
        found = self.lookup(st.opcode)
        if not found.valid and self._partial(st.opcode):
            self._skip(st, counts)  # perhaps a form the spec does not have yet
            return None
        counts.checked += 1
        if not found.valid:
            out.append(Finding(path, st.line, st.col, "form",
                               f"{st.opcode}: not a valid form: "
                               + "; ".join(found.problems), _closest(found)))
            return None
        self._suggest(path, st, found)
        return found

    def _suggest(self, path: str, st: Statement, found: Lookup) -> None:
        if self.suggestions is None:
            return
        from ptxgen.model.calls import calls_for, form_written

        calls = calls_for(form_written(found.forms, st.operands) or found.forms[0])
        if calls is not None:
            self.suggestions.append(Suggestion(path, st.line, st.col, st.opcode, calls.cpp,
                                               calls.python))

    def _guarded_support(self, path: str, st: Statement, found: Lookup,
                         allows: dict[str, bool | None], version: str) -> Finding | None:
        tk = self.toolkit
        possible = [t for t, a in allows.items() if a is not False]
        if any(f.support_for(tk).supported(self.targets, t, version)
               for f in found.forms for t in possible):
            return None
        where = ", ".join(possible[:8]) + (", ..." if len(possible) > 8 else "")
        union = sorted({t for f in found.forms
                        for t in f.support_for(tk).matrix(self.targets)},
                       key=self.targets.names.index)
        return Finding(path, st.line, st.col, "unsupported",
                       f"{st.opcode}: supported on none of the targets its #if branch is "
                       f"compiled for ({where})", ", ".join(union) or "no target")

    # -- the module ------------------------------------------------------------------
    def _context(self, path: str, module: Module, target: str | None, version: str | None,
                 out: list[Finding]) -> bool:
        """Whether ``target`` is one the spec knows at ``version`` (else one finding)."""
        if target is None:
            return False
        if target not in self.targets.by_name:
            from ptxgen.names import did_you_mean

            if target in self.iset.targets.by_name:  # known, not to this toolkit
                out.append(Finding(path, module.target_line, 1, "target",
                                   f".target {target}: CUDA {self.toolkit}'s ptxas does not "
                                   "know this target", ", ".join(self.targets.names)))
            elif _sm_number(target) is not None and _sm_number(target) >= 75:  # type: ignore
                out.append(Finding(path, module.target_line, 1, "target",
                                   f".target {target}: unknown target"
                                   f"{did_you_mean(target, list(self.targets.names))}",
                                   ", ".join(self.targets.names)))
            return False
        if version is not None and version in self.targets.versions:
            t = self.targets.get(target)
            if not t.exists_at(version):
                out.append(Finding(path, module.target_line or module.version_line, 1,
                                   "target", f".target {target} does not exist at PTX ISA "
                                   f"{version}", f"PTX ISA {t.since} or later"))
        return True

    def _misspelt(self, path: str, st: Statement) -> Finding | None:
        head = st.opcode.split(".")[0]
        if head not in self._heads:
            return None
        best, name = 0.0, ""
        for n in self._names:
            if n.split(".")[0] != head:
                continue
            k = n.count(".") + 1
            written = ".".join(st.opcode.split(".")[:k + 1])
            for w in {written, ".".join(st.opcode.split(".")[:k])}:
                r = difflib.SequenceMatcher(None, w, n).ratio()
                if r > best:
                    best, name = r, n
        if best < 0.8:
            return None
        return Finding(path, st.line, st.col, "unknown-instruction",
                       f"{st.opcode}: unknown instruction (did you mean {name}?)", name)

    def _support(self, path: str, st: Statement, found: Lookup, target: str,
                 version: str) -> Finding | None:
        tk = self.toolkit
        if any(f.support_for(tk).supported(self.targets, target, version) for f in found.forms):
            return None
        union: dict[str, str] = {}
        for f in found.forms:
            for t, first in f.support_for(tk).matrix(self.targets).items():
                if t not in union or _vkey(first) < _vkey(union[t]):
                    union[t] = first
        who = f"CUDA {tk}'s ptxas" if tk else "the PTX ISA"
        if target in union:
            why = f"needs PTX ISA {union[target]} on {target} ({who})"
        else:
            why = f"not supported on {target} ({who})"
        where = ", ".join(f"{t} from {v}" for t, v in union.items()) or "no target"
        return Finding(path, st.line, st.col, "unsupported",
                       f"{st.opcode}: not supported on {target} at PTX ISA {version}: {why}",
                       where)

    # -- descriptors -----------------------------------------------------------------
    def _descriptors(self, path: str, st: Statement, found: Lookup, values: Values,
                     target: str | None, version: str | None,
                     counts: Counts) -> Iterator[Finding]:
        ins = found.instruction
        assert ins is not None
        for form in found.forms:
            texts = operand_texts(form, st.operands)
            if texts is None:
                continue
            words: dict[str, tuple[Any, Known]] = {}
            for name, (desc, kind_of) in ins.descriptor_links.items():
                if name not in texts:
                    continue
                text = texts[name]
                if text.startswith("["):
                    text = text[1:-1].strip()
                kind = form.params[kind_of] if kind_of else None
                cls = _class(desc, kind, target, version)
                if cls is None:
                    continue
                known = values.of(text, cls.WORD_BITS)
                if known.mask == 0:
                    continue
                counts.descriptors += 1
                words[name] = (cls, known)
                yield from self._descriptor(path, st, form, name, cls, known, target)
            yield from self._offsets(path, st, form, texts, words)
            return

    def _offsets(self, path: str, st: Statement, form: Form, texts: dict[str, str],
                 words: dict[str, tuple[Any, Known]]) -> Iterator[Finding]:
        """The byte offsets of the shared memory descriptors against the tiles the
        instruction reads through them (:mod:`ptxgen.lint.strides`)."""
        name = form.instruction.name
        idesc = words.get("idesc")
        fields = _decoded(*idesc) if idesc is not None else None
        for operand in ("a_desc", "b_desc"):
            if operand not in words:
                continue
            cls, known = words[operand]
            if name.startswith("wgmma.mma_async"):
                tile = wgmma_tile(form.params, texts, operand, ".sp" in name)
            elif name.startswith("tcgen05.mma"):
                bit = _bits(*idesc, f"transpose_{operand[0]}") if idesc is not None else None
                tile = tcgen05_tile(form.params, operand, fields, bit)
            else:
                continue
            code = _bits(cls, known, "swizzle")
            if tile is None or code is None:
                continue
            sw = next((n for n, c in _field(cls, "swizzle").names.items() if c == code), "")
            for field_name, why in needed(tile, sw).items():
                if _bits(cls, known, field_name) != 0:
                    continue
                yield Finding(path, st.line, st.col, "descriptor-offset",
                              f"{st.opcode}: {operand} ({_layout(cls)}): {field_name} = 0, "
                              f"but {tile.operand} ({tile.layout(sw)}) needs it: {why}",
                              f"the byte offset between those groups in {field_name} "
                              "(non-zero, a multiple of 16)")

    def _descriptor(self, path: str, st: Statement, form: Form, name: str, cls: Any,
                    known: Known, target: str | None) -> Iterator[Finding]:
        where = f"{name} ({_layout(cls)})"
        value = f" = {known.value:#x}" if known.full else ""
        reserved = known.ones() & cls.RESERVED_MASK
        if reserved:
            yield Finding(path, st.line, st.col, "descriptor-reserved",
                          f"{st.opcode}: {where}{value}: reserved bits set: "
                          f"{_bit_list(reserved)}", "0 in the reserved bits")
        fixed = known.mask & cls.FIXED_MASK & (known.value ^ cls.FIXED_VALUE)
        if fixed:
            yield Finding(path, st.line, st.col, "descriptor-reserved",
                          f"{st.opcode}: {where}{value}: fixed bits differ: {_bit_list(fixed)}",
                          f"{cls.FIXED_VALUE & cls.FIXED_MASK:#x} in the fixed bits")
        for spec in cls.FIELDS:
            v = known.bits(spec.lsb, spec.width)
            if v is None or not spec.names or spec.type not in ("enum",):
                continue
            if v not in spec.names.values():
                yield Finding(path, st.line, st.col, "descriptor-field",
                              f"{st.opcode}: {where}{value}: {spec.name}: code {v} is not "
                              "allowed", spec.domain)
        if not known.full or reserved or fixed:
            return
        from ptxgen.isa import DescriptorError
        from ptxgen.isa._runtime import spelled_fields

        try:
            fields = spelled_fields(cls.decode(known.value))
        except DescriptorError as exc:
            spec = _field(cls, exc.field)
            if spec is None or spec.type != "enum":
                yield Finding(path, st.line, st.col, "descriptor-field",
                              f"{st.opcode}: {where}{value}: {exc.field}: {exc.value} is not "
                              "allowed", str(exc.allowed))
            return
        ins = form.instruction
        for problem in ins.descriptor_problems(form.params, name, fields, target):
            yield Finding(path, st.line, st.col, "descriptor-rule",
                          f"{st.opcode}: {where}{value}: {problem}", _rule_hint(problem))


def _field(cls: Any, name: str) -> Any:
    return next((s for s in cls.FIELDS if s.name == name), None)


def _bits(cls: Any, known: Known, name: str) -> int | None:
    """The raw bits of field ``name`` where all of them are known (None otherwise, or
    where the layout has no such field)."""
    spec = _field(cls, name)
    return known.bits(spec.lsb, spec.width) if spec is not None else None


def _decoded(cls: Any, known: Known) -> dict[str, object] | None:
    """The fields of a word known whole (None otherwise, or where it does not decode)."""
    if not known.full:
        return None
    from ptxgen.isa import DescriptorError
    from ptxgen.isa._runtime import spelled_fields

    try:
        return dict(spelled_fields(cls.decode(known.value)))
    except DescriptorError:
        return None


def _class(desc: str, kind: str | None, target: str | None, version: str | None) -> Any:
    from ptxgen.isa import descriptor_class

    try:
        cls: Any = descriptor_class(desc, kind, target, version)
    except (KeyError, ValueError, TypeError):
        return None
    return cls


def _layout(cls: Any) -> str:
    kind = f" .kind::{cls.KIND}" if cls.KIND else ""
    variant = f", {cls.VARIANT} layout" if getattr(cls, "VARIANT", None) else ""
    return f"{cls.DESCRIPTOR!s}{kind}{variant}"


def _bit_list(mask: int) -> str:
    return ", ".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1)


def _rule_hint(problem: str) -> str:
    """What would be valid, from a descriptor rule's problem text: its "allowed: ..." or
    the rule's own statement (without the values found and the rule id)."""
    if "allowed: " in problem:
        return problem.split("allowed: ", 1)[1]
    return re.sub(r"\s*\([^()]*\)\s*\[[\w.-]+\]$", "", problem)


def _closest(found: Lookup) -> str:
    for p in found.problems:
        if "did you mean " in p:
            return p.split("did you mean ", 1)[1].split("?")[0].strip("'")
    return ""


def _module_target(module: Module) -> str | None:
    for t in module.targets:
        if t.startswith("sm_"):
            return t
    return None


def _sm_number(target: str) -> int | None:
    digits = "".join(ch for ch in target[3:] if ch.isdigit())
    return int(digits) if target.startswith("sm_") and digits else None


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def counts_text(c: Counts, files: int) -> str:
    return (f"{files} file(s), {c.instructions} instruction(s): {c.checked} checked, "
            f"{c.skipped} of other families skipped, {c.descriptors} descriptor operand(s) "
            "with known bits")


__all__ = ["Checker", "Counts", "Finding", "Suggestion", "counts_text", "operand_texts"]
