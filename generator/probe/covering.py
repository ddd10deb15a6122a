"""Covering arrays: the forms CI's conformance matrix assembles instead of all of them.

An instruction with large qualifier products (ld, st, atom, red) has tens of thousands of
forms; assembling each on every (target, PTX ISA version) pair is a benchmark
(benchmarks/bench_ptxas_matrix.py), not a CI test. CI checks a subset of the valid forms
on every pair of the matrix, chosen so that

* every value of every qualifier and operand choice (``Form.values``) is in a checked
  form, so every value meets every (target, version) at least once, per assembler;
* every pair of values of two parameters that some valid form holds together is held by
  a checked form (pairwise coverage: a rule or gate naming two qualifiers is exercised);
* every distinct support of the instruction (``Form.support``: the outcome of its gates)
  is held by a checked form, so each gate's boundary is assembled on each side.

Not every check needs every pair (:class:`Plan`, what the conformance matrix and the
covering probe assemble): each instruction's :func:`value_forms` (every value and every
support, a few dozen forms) are assembled on every (target, version) pair, so every value
meets every target and version; the rest of its covering array (the pairs of values) once,
at the newest version, on the first target that has the form. Each checked form is
assembled with code generation once, there (its *home*); every other check is
verify-only. The whole matrix, every form on every pair, is
benchmarks/bench_ptxas_matrix.py.

The subset is found greedily (the form that covers most of what is still uncovered,
ties to the earlier form), which is deterministic and, with lazy gains, linear in the
number of forms times the pairs per form.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from ptxgen.model.instructions import Form, Instruction


def covering_forms(ins: Instruction) -> tuple[Form, ...]:
    """The checked forms of ``ins``, in the instruction's form order (see the module doc);
    made once per instruction (the two assemblers share it)."""
    hit: tuple[Form, ...] | None = ins.__dict__.get("_covering_forms")
    if hit is None:
        hit = ins.__dict__["_covering_forms"] = _covering(ins.forms)
    return hit


def value_forms(ins: Instruction) -> tuple[Form, ...]:
    """The forms of ``ins`` checked on every pair: every value of every parameter and every
    distinct support held by one of them (a subset of :func:`covering_forms`' forms'
    requirements, found the same way), in the instruction's form order."""
    hit: tuple[Form, ...] | None = ins.__dict__.get("_value_forms")
    if hit is None:
        hit = ins.__dict__["_value_forms"] = _covering(ins.forms, pairs=False)
    return hit


def _covering(forms: Sequence[Form], pairs: bool = True) -> tuple[Form, ...]:
    if len(forms) <= 2:
        return tuple(forms)
    index: dict[object, int] = {}  # (name, value) -> bit; a support -> bit
    rows = [[index.setdefault(kv, len(index)) for kv in f.values] for f in forms]
    supports = [index.setdefault(("support", f.support), len(index)) for f in forms]
    n = len(index)
    masks = []
    for row, sup in zip(rows, supports, strict=True):
        bits = {sup, *row}
        if pairs:
            bits.update(n * (1 + a) + b for a, b in combinations(sorted(row), 2))
        masks.append(sum(1 << b for b in bits))
    return tuple(forms[i] for i in sorted(greedy_cover(masks)))


@dataclass(frozen=True)
class Plan:
    """Which checked forms are assembled where (see the module doc).

    ``every_pair``: the value forms, on every (target, version) pair; ``newest``: target ->
    the other forms of the covering arrays, assembled at the newest version there only;
    ``home``: form key -> the target whose newest version assembles it with code
    generation (the first target that has it there, else the first target)."""

    every_pair: tuple[Form, ...]
    newest: dict[str, tuple[Form, ...]]
    home: dict[str, str]

    def at(self, target: str, version: str, newest: str) -> list[Form]:
        """The forms checked at ``(target, version)``; ``newest``: the matrix's newest
        version."""
        return [*self.every_pair, *(self.newest.get(target, ()) if version == newest else ())]

    @property
    def forms(self) -> list[Form]:
        return [*self.every_pair, *(f for fs in self.newest.values() for f in fs)]


def plan(instructions: Iterable[Instruction], targets: Sequence[str],
         supported: Callable[[Form, str], bool]) -> Plan:
    """The plan of CI's check over ``targets`` (in order; the renamed ones left out by the
    caller); ``supported(form, target)``: whether the spec supports the form there at the
    newest version."""
    every: list[Form] = []
    newest: dict[str, list[Form]] = {}
    home: dict[str, str] = {}
    for ins in instructions:
        values = value_forms(ins)
        every += values
        seen = {f.key for f in values}
        for f in covering_forms(ins):
            t = next((t for t in targets if supported(f, t)), targets[0])
            home[f.key] = t
            if f.key not in seen:
                newest.setdefault(t, []).append(f)
        for f in values:
            home.setdefault(f.key, next((t for t in targets if supported(f, t)), targets[0]))
    return Plan(tuple(every), {t: tuple(fs) for t, fs in newest.items()}, home)


def greedy_cover(masks: Sequence[int]) -> list[int]:
    """Indices of bit sets whose union is the union of all (greedy set cover, lazy gains:
    a gain only shrinks, so a popped set whose fresh gain is still the best is taken)."""
    uncovered = 0
    for m in masks:
        uncovered |= m
    heap = [(-m.bit_count(), i) for i, m in enumerate(masks)]
    heapq.heapify(heap)
    chosen: list[int] = []
    while uncovered and heap:
        _neg, i = heapq.heappop(heap)
        gain = (masks[i] & uncovered).bit_count()
        if gain == 0:
            continue
        if heap and gain < -heap[0][0]:  # a stale gain: put it back with the fresh one
            heapq.heappush(heap, (-gain, i))
            continue
        chosen.append(i)
        uncovered &= ~masks[i]
    return chosen


__all__ = ["Plan", "covering_forms", "greedy_cover", "plan", "value_forms"]
