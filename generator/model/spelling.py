"""Spellings of an instruction that the ISA does not write but ptxas reads.

Two spec constructs, both per instruction (``spelling:`` and ``alias_names:``):

* **Qualifier order.** ptxas reads an opcode as its instruction name followed by
  tokens (``.x2``, ``.m8n8``, ``.shared::cta``) in almost any order: only the first
  tokens (ptxas's own instruction name: ``head`` tokens of the spec's name after its
  first word, then the ``fixed`` qualifiers) stay where the ISA writes them, and the
  tokens of each ``ordered`` group of qualifiers (``.f32.e4m3.e4m3.f32``: d, a, b, c)
  keep their relative order. ``ldmatrix.sync.aligned.x2.m8n8.shared.b16`` is
  ``ldmatrix.sync.aligned.m8n8.x2.shared.b16``; an instruction without ``spelling``
  is read in the ISA's order only.
* **Other names.** ``bar.sync`` is the ISA's name of ``barrier.sync.aligned``: an
  alias name replaces the spec's first word(s) and sets qualifiers that must then not
  be written (ptxas refuses ``bar.sync.aligned``).

:func:`reorder` reads a written opcode as the ISA's order; the model's ``lookup``
then checks that text as usual. This module imports nothing of the model (the model
imports it), so it sees qualifiers through :class:`QualifierLike`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class QualifierLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def values(self) -> tuple[str, ...]: ...

    def render(self, value: str) -> str: ...


@dataclass(frozen=True)
class Spelling:
    """Which written orders of an instruction's tokens ptxas reads (see the module doc)."""

    head: int  # tokens of the name after its first word that stay first
    fixed: tuple[tuple[str, frozenset[str] | None], ...]  # (qualifier, values or None: any)
    ordered: tuple[tuple[str, ...], ...]
    evidence: str
    loose: tuple[str, ...] = ()  # qualifiers whose text of several tokens takes any order

    @staticmethod
    def build(raw: Mapping[str, Any] | None) -> Spelling | None:
        if raw is None:
            return None
        fixed: list[tuple[str, frozenset[str] | None]] = []
        for item in raw.get("fixed", ()):
            if isinstance(item, str):
                fixed.append((item, None))
            else:
                fixed.append((item["qualifier"], frozenset(str(v) for v in item["values"])))
        return Spelling(int(raw.get("head", 0)), tuple(fixed),
                        tuple(tuple(g) for g in raw.get("ordered", ())),
                        str(raw.get("provenance", {}).get("ptxas", "")),
                        tuple(raw.get("loose", ())))


@dataclass(frozen=True)
class AliasName:
    """Another name of the instruction: ``name`` is written for the spec's ``replaces``
    (its first words), and the qualifiers ``sets`` then have these values."""

    name: str
    replaces: str
    sets: tuple[tuple[str, str], ...]

    @staticmethod
    def build(raw: Mapping[str, Any], ins_name: str) -> AliasName:
        return AliasName(raw["name"], raw.get("replaces", ins_name.split(".")[0]),
                         tuple((k, "true" if v is True else str(v))
                               for k, v in raw.get("sets", {}).items()))


def _ranks(name: str, qualifiers: Sequence[QualifierLike], spelling: Spelling
           ) -> tuple[dict[str, set[tuple[int, int]]], dict[str, set[tuple[int, int]]],
                      dict[tuple[int, int], frozenset[str] | None], set[int]]:
    """Where each token can stand in the ISA's order: {whole token: ranks} and {token
    start (a text that glued parts continue): ranks}; a rank is (part, token of the part's
    text), a part the name's tokens after the first word, then the qualifiers; the members
    of an ``ordered`` group share the rank of its first member. Also the ranks that stay
    in place (the head, the fixed qualifiers with the values that do), and the parts
    whose text of several tokens may be written in any order (``loose``)."""
    whole: dict[str, set[tuple[int, int]]] = {}
    start: dict[str, set[tuple[int, int]]] = {}
    fixed_at: dict[tuple[int, int], frozenset[str] | None] = {}
    loose: set[int] = set()
    rest = name.split(".")[1:]
    for i, t in enumerate(rest):
        whole.setdefault(t, set()).add((i, 0))
        if i == len(rest) - 1 and qualifiers and any(
                not qualifiers[0].render(v).startswith(".") for v in qualifiers[0].values):
            start.setdefault(t, set()).add((i, 0))  # tcgen05.wait::ld
        if i < spelling.head:
            fixed_at[(i, 0)] = None
    first = {q: min(i for i, x in enumerate(qualifiers) if x.name in g)
             for g in spelling.ordered for q in g}
    fixed = dict(spelling.fixed)
    for i, q in enumerate(qualifiers):
        part = len(rest) + first.get(q.name, i)
        if q.name in spelling.loose:
            loose.add(part)
        glued = i + 1 < len(qualifiers) and any(
            not qualifiers[i + 1].render(v).startswith(".") for v in qualifiers[i + 1].values)
        for v in q.values:
            piece = q.render(v)
            if not piece.startswith("."):
                continue
            toks = piece[1:].split(".")
            for k, t in enumerate(toks):
                whole.setdefault(t, set()).add((part, k))
            if glued:
                start.setdefault(toks[-1], set()).add((part, len(toks) - 1))
        if q.name in fixed:
            values = fixed[q.name]
            fixed_at[(part, 0)] = None if values is None else frozenset(
                q.render(v)[1:].split(".")[0] for v in values)
    return whole, start, fixed_at, loose


def reorder(text: str, name: str, qualifiers: Sequence[QualifierLike],
            spelling: Spelling) -> list[str]:
    """The texts in the ISA's order that ``text`` may be a reordering of under
    ``spelling`` (empty when it is none); each still has to be checked as a form.

    Each written token is given its place in the ISA's order (a token that may stand in
    several places gives several readings, at most 16), the tokens are sorted by it
    (stably: an ``ordered`` group keeps the written order), and a token that stays in
    place (the head, a fixed qualifier) must be where it was written.
    """
    tokens = text.split(".")
    word = name.split(".")[0]
    if tokens[0] != word or len(tokens) > 40:
        return []
    written = tokens[1:]
    nhead = min(spelling.head, len(name.split(".")) - 1)
    if any(w != t and not w.startswith(t + "::")
           for w, t in zip(written[:nhead], name.split(".")[1:1 + nhead], strict=False)):
        return []
    whole, start, fixed_at, loose = _ranks(name, qualifiers, spelling)
    options: list[list[tuple[int, int]]] = []
    for t in written:
        ranks = set(whole.get(t, ()))
        ranks |= {r for s, rs in start.items() if t.startswith(s) and t != s for r in rs}
        if not ranks:
            return []
        options.append(sorted(ranks))
    out: list[str] = []
    for choice in itertools.islice(itertools.product(*options), 16):
        order = sorted(range(len(written)), key=lambda j: choice[j])
        parts = [r[0] for r in choice]  # the tokens of one part's text keep their order
        if any(parts[a] == parts[b] and choice[a][1] >= choice[b][1]
               and parts[a] not in loose
               for a in range(len(choice)) for b in range(a + 1, len(choice))
               if choice[a][1] or choice[b][1]):
            continue
        where = {j: k for k, j in enumerate(order)}
        if any(r in fixed_at and where[j] != j
               and (fixed_at[r] is None or written[j] in (fixed_at[r] or ()))
               for j, r in enumerate(choice)):
            continue
        out.append(".".join([word, *(written[j] for j in order)]))
    return list(dict.fromkeys(t for t in out if t != text))
