"""The covering arrays that CI's conformance matrix assembles (ptxgen.probe.covering).

Checked by brute force against the definition for every instruction of the spec: every
value, every pair of values held together by a valid form, and every distinct support is
held by a chosen form; and the greedy cover on small cases against exhaustive search.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from ptxgen.isa import ptx
from ptxgen.probe.covering import covering_forms, greedy_cover, plan, value_forms

ISET = ptx.instruction_set()


@pytest.mark.parametrize("ident", [i.id for i in ISET.instructions])
def test_every_value_pair_and_support_is_covered(ident: str) -> None:
    ins = ISET.get(ident)
    chosen = covering_forms(ins)
    assert {f.key for f in chosen} <= {f.key for f in ins.forms}
    want_pairs = {p for f in ins.forms for p in combinations(sorted(f.values), 2)}
    got_pairs = {p for f in chosen for p in combinations(sorted(f.values), 2)}
    assert want_pairs - got_pairs == set()
    assert {kv for f in ins.forms for kv in f.values} == {kv for f in chosen for kv in f.values}
    assert {f.support for f in ins.forms} == {f.support for f in chosen}
    # in the instruction's order, each once
    order = {f.key: n for n, f in enumerate(ins.forms)}
    assert [order[f.key] for f in chosen] == sorted({order[f.key] for f in chosen})


@pytest.mark.parametrize("ident", [i.id for i in ISET.instructions])
def test_value_forms_hold_every_value_and_support(ident: str) -> None:
    ins = ISET.get(ident)
    chosen = value_forms(ins)
    assert {kv for f in ins.forms for kv in f.values} == {kv for f in chosen for kv in f.values}
    assert {f.support for f in ins.forms} == {f.support for f in chosen}
    assert len(chosen) <= len(covering_forms(ins))


def test_the_plan_checks_every_value_everywhere_and_every_pair_once() -> None:
    """CI's plan (the conformance matrix's and the covering probe's): value forms on every
    pair, the rest of the covering arrays at the newest version of a home target that has
    them, where each checked form is assembled with code generation."""
    tt = ISET.targets
    names = [t.name for t in tt.targets if t.until is None]

    def supported(f: object, t: str) -> bool:
        return bool(f.support.supported(tt, t, tt.newest))  # type: ignore[attr-defined]

    chosen = plan(ISET.instructions, names, supported)
    def ids(forms: object) -> list[tuple[str, str]]:
        return [(f.instruction.id, f.key) for f in forms]  # type: ignore[attr-defined]

    every = set(ids(chosen.every_pair))
    assert every == {k for i in ISET.instructions for k in ids(value_forms(i))}
    once = ids(f for fs in chosen.newest.values() for f in fs)
    assert not every & set(once) and len(once) == len(set(once))
    assert {k for i in ISET.instructions for k in ids(covering_forms(i))} <= every | set(once)
    for t, fs in chosen.newest.items():
        assert all(chosen.home[f.key] == t for f in fs)
    for f in chosen.forms:  # home: a target that has the form, where one does
        has = [t for t in names if supported(f, t)]
        assert chosen.home[f.key] == (has[0] if has else names[0])
    assert len(chosen.every_pair) * 2 < len(chosen.forms)


def test_the_arrays_are_much_smaller_than_the_forms() -> None:
    forms = sum(len(i.forms) for i in ISET.instructions)
    chosen = sum(len(covering_forms(i)) for i in ISET.instructions)
    assert chosen * 3 < forms


def _optimum(masks: list[int]) -> int:
    full = 0
    for m in masks:
        full |= m
    for k in range(len(masks) + 1):
        for pick in combinations(masks, k):
            u = 0
            for m in pick:
                u |= m
            if u == full:
                return k
    raise AssertionError


@pytest.mark.parametrize("masks", [
    [0b0011, 0b0110, 0b1100, 0b1000],
    [0b111000, 0b000111, 0b100100, 0b010010, 0b001001],
    [0b1, 0b1, 0b1],
    [],
])
def test_greedy_cover_covers_and_is_near_optimal(masks: list[int]) -> None:
    chosen = greedy_cover(masks)
    full = 0
    for m in masks:
        full |= m
    got = 0
    for i in chosen:
        got |= masks[i]
    assert got == full
    assert len(set(chosen)) == len(chosen)
    assert len(chosen) <= 2 * _optimum(masks)
