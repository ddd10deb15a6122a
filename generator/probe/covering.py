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

The subset is found greedily (the form that covers most of what is still uncovered,
ties to the earlier form), which is deterministic and, with lazy gains, linear in the
number of forms times the pairs per form.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from itertools import combinations

from ptxgen.model.instructions import Form, Instruction


def covering_forms(ins: Instruction) -> tuple[Form, ...]:
    """The checked forms of ``ins``, in the instruction's form order (see the module doc);
    made once per instruction (the two assemblers share it)."""
    hit: tuple[Form, ...] | None = ins.__dict__.get("_covering_forms")
    if hit is None:
        hit = ins.__dict__["_covering_forms"] = _covering(ins.forms)
    return hit


def _covering(forms: Sequence[Form]) -> tuple[Form, ...]:
    if len(forms) <= 2:
        return tuple(forms)
    index: dict[object, int] = {}  # (name, value) -> bit; a support -> bit
    rows = [[index.setdefault(kv, len(index)) for kv in f.values] for f in forms]
    supports = [index.setdefault(("support", f.support), len(index)) for f in forms]
    n = len(index)
    masks = []
    for row, sup in zip(rows, supports, strict=True):
        bits = {sup, *row}
        bits.update(n * (1 + a) + b for a, b in combinations(sorted(row), 2))
        masks.append(sum(1 << b for b in bits))
    return tuple(forms[i] for i in sorted(greedy_cover(masks)))


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


__all__ = ["covering_forms", "greedy_cover"]
