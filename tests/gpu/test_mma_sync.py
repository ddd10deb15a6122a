"""mma.sync on an H100 through ptxgen::ptx::mma_sync: every form the generated header
offers for sm_90a (98: f16, bf16, tf32, e4m3/e5m2, s8/u8, s4/u4, b1 .and/.xor .popc and f64,
every shape, .satfinite, the four layouts of m8n8k4 .f16, and m16n8k4 .f64 with each explicit
rounding .rn / .rz / .rm / .rp).

Each form runs once on random operands (one warp; kernels/mma_sync.cu packs the fragments
by the PTX ISA layouts) and D is compared element by element with a float64 / int64 numpy
reference: integers exactly (with .satfinite clamping to the s32 range, which the inputs
provoke), floats to |D - ref| <= rtol * (|A| @ |B| + |C|) + (output rounding) * |ref| with
rtol 2^-16 for f16 / bf16 / tf32 into f32, 2^-9 for e4m3 / e5m2 into f32, 2^-9 into f16
and 2^-44 for f64 (tests/gpu/codes.py). A misplaced element costs about 2/K of that scale.
The .satfinite forms get operands that drive some elements past both ends of the s32 range.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpu import forms
from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

FORMS = forms.mma_forms()
POISON = 0xFFFF_FFFF_FFFF_FFFF


def test_header_offers_every_sm90_form() -> None:
    """The header's sm_90a forms are exactly the PTX ISA's (independent list in forms.py)."""
    names = {f.name for f in FORMS}
    assert names == forms.SM90_MMA_EXPECTED, (
        f"missing: {sorted(forms.SM90_MMA_EXPECTED - names)}; "
        f"extra: {sorted(names - forms.SM90_MMA_EXPECTED)}")


def test_library_builds_every_form(mma_lib: Any) -> None:
    built = [mma_lib.mma_name(i).decode() for i in range(mma_lib.mma_count())]
    assert built == [f.name for f in FORMS]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.test_id)
def test_mma_sync(form: forms.MmaForm, mma_lib: Any, torch: Any) -> None:
    import numpy as np

    from gpu import codes

    index = [f.name for f in FORMS].index(form.name)
    rng = np.random.default_rng(seed_for(form.name))
    p = 4 if form.quadpair else 1  # m8n8k4 .f16: one product per quad pair
    m, n, k = form.m, form.n, form.k
    a_codes, a = codes.random_codes(form.atype, (p, m, k), rng)
    b_codes, b = codes.random_codes(form.btype, (p, k, n), rng)
    c_codes, c = codes.random_acc(form.ctype, (p, m, n), rng)
    if form.satfinite:  # D[0, 0] (and D[1, 0] or D[1, 1] for signed types) leave the s32 range
        codes.force_saturation(form.atype, form.btype, a_codes, a, b_codes, b, c_codes, c)

    dev = torch.device("cuda")

    def put(x: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int64)).to(dev)

    d_dev = torch.full((p, m, n), -1, dtype=torch.int64, device=dev)
    ins = [put(a_codes), put(b_codes), put(c_codes)]
    err = mma_lib.mma_run(index, *(t.data_ptr() for t in ins), d_dev.data_ptr())
    check_cuda(mma_lib, err)
    d_codes = d_dev.cpu().numpy().view(np.uint64)
    assert not (d_codes == np.uint64(POISON)).any(), "elements of D were not written"
    d = codes.decode(form.dtype, d_codes)

    if form.atype == "b1":
        if form.bitop == "and":
            ref = np.einsum("pmk,pkn->pmn", a, b) + c
        else:  # xor: a + b - 2ab per bit
            ref = (a.sum(axis=2)[:, :, None] + b.sum(axis=1)[:, None, :]
                   - 2 * np.einsum("pmk,pkn->pmn", a, b)) + c
    else:
        ref = np.einsum("pmk,pkn->pmn", a, b) + c
    if form.satfinite:
        saturated = int(((ref > (1 << 31) - 1) | (ref < -(1 << 31))).sum())
        assert saturated > 0, "the inputs did not reach the s32 limits"
        ref = np.clip(ref, -(1 << 31), (1 << 31) - 1)
    scale = np.einsum("pmk,pkn->pmn", np.abs(a), np.abs(b)).astype(np.float64) + np.abs(c)
    problem = codes.compare(d, ref, scale, form.atype, form.dtype)
    assert problem is None, f"{form.name}: {problem}"
