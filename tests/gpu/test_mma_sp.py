"""mma.sp and mma.sp::ordered_metadata on an H100 through ptxgen::ptx::mma_sp and
ptxgen::ptx::mma_sp_ordered_metadata: every form the generated header offers for sm_90a
(88: .f16, .bf16, .tf32, .e4m3/.e5m2, .u8/.s8, .u4/.s4 on both shapes of each, .satfinite).

A 2:4 structured-sparse A is drawn as its compressed form (M x K/2, the non-zero elements of
each row in order) and one sparsity pattern, which fixes the metadata: every 4-bit field of
sp-meta holds the two positions (2 bits each, the lower first, as ::ordered_metadata
requires) of the non-zero elements of a chunk. The PTX ISA's chunks (9.7.14.6.1) are 4
elements for 16- and 8-bit types, 2 .tf32 elements (1:2; the fields 0b0100 and 0b1110 keep
element 0 or 1) and 8 .u4/.s4 elements (positions name pairs). The reference expands the
compressed A with that pattern into the dense M x K matrix and compares D with
A_dense @ B + C exactly as tests/gpu/test_mma_sync.py does (codes.compare). Every valid
pattern runs, so a compressed element in the wrong place, a wrong register count or a
misplaced metadata operand shows up as a wrong D.

The selector test gives the threads the selector names one pattern and the other threads
of each group of four another: D must follow the named threads (PTX ISA: the metadata of a
group is held by 4 / (number of selector values) of its threads, selected in that order).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpu import forms
from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

FORMS = forms.mma_sp_forms()
POISON = 0xFFFF_FFFF_FFFF_FFFF

#: (index of the first, index of the second non-zero unit) of a chunk of four units -> the
#: 4-bit metadata field (bits 1:0 and 3:2).
PATTERNS = {(i0, i1): i0 | (i1 << 2) for i0 in range(4) for i1 in range(i0 + 1, 4)}
TF32_PATTERNS = {(0, 1): 0b0100, (2, 3): 0b1110}  # element 0 or element 1 of each pair


def patterns(atype: str) -> dict[tuple[int, int], int]:
    return TF32_PATTERNS if atype == "tf32" else PATTERNS


def kept_columns(atype: str, k: int, pattern: tuple[int, int]) -> list[int]:
    """The columns of a K-wide row of A that hold its K/2 non-zero elements, in order."""
    bits = forms.BITS[atype]
    unit = 16 if atype == "tf32" else max(bits, 8)  # metadata granularity in bits
    cols = [c for c in range(k) if ((c * bits) // unit) % 4 in pattern]
    assert len(cols) == k // 2, (atype, pattern, cols)
    return cols


def test_header_offers_every_sm90_form() -> None:
    """The header's sm_90a sparse forms are exactly the PTX ISA's (list in forms.py)."""
    names = {f.name for f in FORMS}
    assert names == forms.SM90_MMA_SP_EXPECTED, (
        f"missing: {sorted(forms.SM90_MMA_SP_EXPECTED - names)}; "
        f"extra: {sorted(names - forms.SM90_MMA_SP_EXPECTED)}")


def test_library_builds_every_form(mma_sp_lib: Any) -> None:
    built = [mma_sp_lib.mma_sp_name(i).decode() for i in range(mma_sp_lib.mma_sp_count())]
    assert built == [f.name for f in FORMS]
    assert [mma_sp_lib.mma_sp_selectors(i) for i in range(len(FORMS))] == [
        f.selectors for f in FORMS]


def _run(form: forms.MmaSpForm, lib: Any, torch: Any, sel: int, meta_pattern: tuple[int, int],
         other_pattern: tuple[int, int]) -> None:
    import numpy as np

    from gpu import codes

    index = [f.name for f in FORMS].index(form.name)
    rng = np.random.default_rng(seed_for(f"{form.name}/{sel}/{meta_pattern}/{other_pattern}"))
    m, n, k = form.m, form.n, form.k
    a_codes, a_comp = codes.random_codes(form.atype, (m, k // 2), rng)
    b_codes, b = codes.random_codes(form.btype, (k, n), rng)
    c_codes, c = codes.random_acc(form.ctype, (m, n), rng)
    if form.satfinite:  # D[0, 0] (and D[1, 0] or D[1, 1] for signed types) leave the s32 range
        codes.force_saturation(form.atype, form.btype, a_codes, a_comp, b_codes, b, c_codes, c)
    a = np.zeros((m, k), dtype=a_comp.dtype)
    a[:, kept_columns(form.atype, k, meta_pattern)] = a_comp

    table = patterns(form.atype)
    meta_sel = table[meta_pattern] * 0x1111_1111
    meta_other = table[other_pattern] * 0x1111_1111

    dev = torch.device("cuda")

    def put(x: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int64)).to(dev)

    d_dev = torch.full((m, n), -1, dtype=torch.int64, device=dev)
    ins = [put(a_codes), put(b_codes), put(c_codes)]
    err = lib.mma_sp_run(index, sel, *(t.data_ptr() for t in ins), d_dev.data_ptr(), meta_sel,
                         meta_other)
    check_cuda(lib, err)
    d_codes = d_dev.cpu().numpy().view(np.uint64)
    assert not (d_codes == np.uint64(POISON)).any(), "elements of D were not written"
    d = codes.decode(form.dtype, d_codes)

    ref = a @ b + c
    if form.satfinite:
        saturated = int(((ref > (1 << 31) - 1) | (ref < -(1 << 31))).sum())
        assert saturated > 0, "the inputs did not reach the s32 limits"
        ref = np.clip(ref, -(1 << 31), (1 << 31) - 1)
    scale = (np.abs(a) @ np.abs(b)).astype(np.float64) + np.abs(c)
    problem = codes.compare(d, ref, scale, form.atype, form.dtype)
    assert problem is None, (f"{form.name} (sp-sel {sel}, pattern {meta_pattern}, others "
                             f"{other_pattern}): {problem}")


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.test_id)
def test_mma_sp(form: forms.MmaSpForm, mma_sp_lib: Any, torch: Any) -> None:
    """Every pattern, the same in every thread, with sp-sel 0."""
    for pattern in patterns(form.atype):
        _run(form, mma_sp_lib, torch, 0, pattern, pattern)


SELECTOR_FORMS = [f for f in FORMS if f.selectors > 1]


@pytest.mark.parametrize("form", SELECTOR_FORMS, ids=lambda f: f.test_id)
def test_mma_sp_selector(form: forms.MmaSpForm, mma_sp_lib: Any, torch: Any) -> None:
    """Each selector value: the named threads' pattern decides, the others' is ignored."""
    table = list(patterns(form.atype))
    for sel in range(form.selectors):
        _run(form, mma_sp_lib, torch, sel, table[0], table[-1])
        _run(form, mma_sp_lib, torch, sel, table[-1], table[0])
