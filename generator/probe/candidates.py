"""Candidate forms the spec does not have, for ``ptxgen probe`` to assemble.

Three sources, each a list of :class:`Candidate` (an opcode ptxas may accept, with the
kernel that asks it):

* **known values in every slot**: one form per combination of each instruction with one
  qualifier set to another value that the spec knows for it or for a qualifier of the
  same name elsewhere (``.ue8m0`` with ``.scale_vec::4X``), or, for a qualifier whose
  values are dotted pairs, a pair of spec tokens that the assembler's strings write
  together (``.s8.s4`` in ``_ldsm.s8.s4`` for ldmatrix's ``.b8x16.b6x16_p32`` slot);
* **tokens the strings pair with a known value**: a dotted pair of the binary's strings
  such as ``.rn.f64`` puts the unknown token after that value (``...f64.f64.rn``);
  (the pairs come from ``ptxgen.probe.propose.toolkit_pairs``)
* **the document's syntax**: every opcode the PTX ISA document's syntax blocks and
  examples write for the instruction (templates expanded with their value sets,
  :mod:`ptxgen.probe.document`), read with the spec's qualifiers allowing one value the
  spec does not know or one extra token.

Forms the spec calls valid, and changes the spec records ptxas as accepting
(``ptxas_leniency`` values, ``ptxas_accepts`` rules), are no candidates; nor is a new
value or token whose opcode the spec reads as such a form with values of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ptxgen.model.instructions import ANY_TOOLKIT, TRUE, Form, Instruction
from ptxgen.probe.assembler import Kernel
from ptxgen.probe.matrix import _ptxas_lenient, near_miss_kernel

_WORD = r"[A-Za-z0-9_:]+"


@dataclass(frozen=True)
class Candidate:
    """An opcode the spec calls invalid or does not know, and its kernel.

    ``new`` is None (every value known to the spec), ``("value", qualifier, value)`` (a
    value the qualifier does not have) or ``("insert", after, token)`` (an extra token
    after the qualifier ``after``, "" for the instruction's name)."""

    instruction: str
    opcode: str
    kernel: Kernel
    new: tuple[str, str, str] | None
    source: str  # known-values | string-pairs | document


def representatives(ins: Instruction) -> list[Form]:
    """One form per combination (or the first few forms without combinations)."""
    out: dict[str, Form] = {}
    for f in ins.forms:
        key = f.combination.id if f.combination is not None else str(len(out) // 50)
        out.setdefault(key, f)
    return list(out.values())


def _base_form(ins: Instruction, params: Mapping[str, str]) -> Form:
    """The combination's form closest to ``params`` (whose operands the kernel lays out
    where the changed form's own cannot be)."""
    return max(representatives(ins),
               key=lambda f: sum(f.params.get(k) == v for k, v in params.items()))


def _candidate(ins: Instruction, base: Form, params: dict[str, str],
               new: tuple[str, str, str] | None, source: str) -> Candidate | None:
    if new is None:
        problems = tuple(ins.violations(params))
        if not problems or _ptxas_lenient(ins, params, problems, ANY_TOOLKIT):
            return None
    elif new[0] == "value":
        q = ins.qualifier(new[1])
        if new[2] in q.values or new[2] in q.lenient_values:
            return None
    key, kernel = near_miss_kernel(ins, base, params)
    if new is not None and new[0] == "insert":
        opcode = key.split(" <- ")[0]
        prefix = _prefix(ins, params, new[1])
        if not opcode.startswith(prefix):
            return None
        text = kernel.lines[-1]
        new_opcode = prefix + new[2] + opcode[len(prefix):]
        key = f"{new_opcode} <- {base.key}"
        kernel = Kernel(key, (*kernel.lines[:-1], new_opcode + text[len(opcode):]))
    opcode = key.split(" <- ")[0]
    if new is not None and _spec_reads(ins, opcode, params):
        return None
    return Candidate(ins.id, opcode, kernel, new, source)


def _spec_reads(ins: Instruction, opcode: str, params: Mapping[str, str]) -> bool:
    """Whether the spec reads ``opcode`` (with the other parameters of ``params``, the
    optional operands) as a form it has, or a leniency it records, with its own values:
    a value of another instruction's same-named qualifier can spell the
    values of two of this one's (cp.async.bulk's sem ``.relaxed.cluster`` is
    mbarrier.arrive's sem ``.relaxed`` and scope ``.cluster``), and is no new value."""
    for read in ins.parse_opcode(opcode)[0]:
        form = {**params, **read}
        problems = tuple(ins.violations(form))
        if not problems or _ptxas_lenient(ins, form, problems, ANY_TOOLKIT):
            return True
    return False


def _prefix(ins: Instruction, params: Mapping[str, str], after: str) -> str:
    """The opcode of ``params`` up to and with the qualifier ``after`` ("": the name)."""
    out = ins.name
    if not after:
        return out
    for q in ins.qualifiers:
        out += q.render(params[q.name])
        if q.name == after:
            break
    return out


def known_value_candidates(ins: Instruction, siblings: Mapping[str, set[str]],
                           pairs: Iterable[str], known: set[str],
                           every_value: bool = True) -> list[Candidate]:
    """Every combination's first form with one qualifier set to a value the spec knows for
    a same-named qualifier, or (dotted-pair qualifiers) a pair of spec tokens the strings
    write together; with ``every_value`` also to every value of its own (in another
    combination) and with the strings' ``.token.value`` pairs' unknown token put after
    ``value``. (Without ``every_value`` only values the qualifier does not have: the
    others find ptxas leniencies the spec does not record yet, README "ptxgen probe".)"""
    out: list[Candidate] = []
    word_pairs = [p[1:] for p in pairs if p.count(".") == 2
                  and all(re.fullmatch(r"[A-Za-z]\w*", x) and x in known
                          for x in p[1:].split("."))]
    mine = {part for q in ins.qualifiers for v in q.values for part in v.split(".")}
    inserts = [(p[1:].split(".")[0], p[1:].split(".")[1]) for p in pairs
               if p.count(".") == 2 and re.fullmatch(r"\.[a-z]\w*\.[a-z]\w*", p)
               and p[1:].split(".")[0] not in mine and p[1:].split(".")[1] in mine]
    for base in representatives(ins):
        for q in ins.qualifiers:
            if q.numeric:
                continue
            values = set(q.domain) if every_value else set()
            if not q.flag:
                values |= siblings.get(q.name, set())
            if any("." in v for v in q.values):
                values |= set(word_pairs)
            if not every_value:
                values -= set(q.domain)
            for v in sorted(values - {base.params[q.name]}):
                new = None if v in q.domain else ("value", q.name, v)
                c = _candidate(ins, base, {**base.params, q.name: v}, new, "known-values")
                if c is not None:
                    out.append(c)
            for token, after_value in inserts if every_value else ():
                if q.flag or base.params[q.name] != after_value:
                    continue
                c = _candidate(ins, base, dict(base.params), ("insert", q.name, "." + token),
                               "string-pairs")
                if c is not None:
                    out.append(c)
    return out


def read_with_one_new(ins: Instruction, text: str, limit: int = 4
                      ) -> list[tuple[dict[str, str], tuple[str, str, str] | None]]:
    """Readings of the opcode ``text`` with the spec's qualifiers (in order) where at most
    one qualifier takes a value the spec does not give it or one extra token stands
    after a qualifier: (params, None / ("value", q, v) / ("insert", after, token)), the
    likeliest first (:func:`_rank`, then the shortest new value); at most ``limit``."""
    quals = ins.qualifiers
    if not text.startswith(ins.name):
        return []
    found: list[tuple[dict[str, str], tuple[str, str, str] | None]] = []

    def walk(i: int, pos: int, acc: dict[str, str], new: tuple[str, str, str] | None,
             after: str) -> None:
        if len(found) >= 64:
            return
        if new is None:  # an extra token here
            m = re.match(r"\." + _WORD, text[pos:])
            if m:
                walk(i, pos + m.end(), acc, ("insert", after, m.group()), after)
        if i == len(quals):
            if pos == len(text):
                found.append((dict(acc), new))
            return
        q = quals[i]
        if q.absent is not None:
            acc[q.name] = q.absent
            walk(i + 1, pos, acc, new, after)
        for v in q.values if not q.flag else (TRUE,):
            piece = q.render(v)
            if piece and text.startswith(piece, pos):
                acc[q.name] = v
                walk(i + 1, pos + len(piece), acc, new, q.name)
        if new is None and not q.flag and "{}" in q.text:
            pre, post = q.text.split("{}", 1)
            if text.startswith(pre, pos):
                rest = text[pos + len(pre):]
                m = re.match(_WORD + r"(?:\." + _WORD + r"){0,2}", rest)
                parts = m.group().split(".") if m else []
                for k in range(1, len(parts) + 1):
                    v = ".".join(parts[:k])
                    if v in q.values or (q.numeric and not v.isdigit()):
                        continue
                    if post and not rest.startswith(post, len(v)):
                        continue
                    acc[q.name] = v
                    walk(i + 1, pos + len(pre) + len(v) + len(post), acc,
                         ("value", q.name, v), q.name)
        acc.pop(q.name, None)

    walk(0, len(ins.name), {}, None, "")
    found.sort(key=lambda r: (_rank(ins, r[1]), len(r[1][2]) if r[1] is not None else 0))
    return found[:limit]


def _rank(ins: Instruction, new: tuple[str, str, str] | None) -> int:
    """Readings in order: nothing new; a new value in a slot that must be written (a
    required qualifier); an extra token; a new value of an optional qualifier, or one that
    is a known value and more (which an extra token explains as well: ``.rn`` is no scale
    type, ``.f64.rn`` no type)."""
    if new is None:
        return 0
    if new[0] == "value":
        q = ins.qualifier(new[1])
        extends = "." in new[2] and new[2].rsplit(".", 1)[0] in q.values  # f64.rn
        return 3 if q.absent is not None or extends else 1
    return 2


def document_candidates(ins: Instruction, opcodes: Sequence[str]) -> list[Candidate]:
    """The candidates among the document's ``opcodes`` of ``ins``: those the spec reads
    as an invalid form, or reads only with one new value or one extra token."""
    out: list[Candidate] = []
    valid = set(ins.by_opcode)
    for text in opcodes:
        if text in valid:
            continue
        readings = [(p, new, _base_form(ins, p)) for p, new in read_with_one_new(ins, text)]
        if any(new is None and not ins.violations({**b.params, **p})
               for p, new, b in readings):
            continue  # valid with other operands (read by_opcode's key differently)
        best = [r for r in readings if r[1] is None] or readings[:1]
        for params, new, base in best[:1]:
            c = _candidate(ins, base, {**base.params, **params}, new, "document")
            if c is not None:
                out.append(c)
    return out


__all__ = ["Candidate", "document_candidates", "known_value_candidates",
           "read_with_one_new", "representatives"]
