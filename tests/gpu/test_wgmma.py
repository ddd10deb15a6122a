"""wgmma.mma_async on an H100 through ptxgen::ptx::wgmma_* with shared-memory matrix
descriptors built by ptxgen::WgmmaDesc (generated/include/ptxgen/wgmma_desc.hpp).

Every input type (f16 into f16 and f32, bf16, tf32, the four e4m3 / e5m2 pairs into f16
and f32, the four u8 / s8 pairs with and without .satfinite, b1 .and.popc), A from a
descriptor and A from registers, each in the four swizzle modes (none, 128B, 64B, 32B) of
the shared-memory layouts of PTX ISA 9.7.15.5.1 -- K-major, and for f16 / bf16 also
M/N-major through imm-trans-a / imm-trans-b -- plus other N, the negating imm-scale-a / -b
and scale-d = 0. Each test issues 4 instructions (128 bytes of K: across swizzle atoms and
inside them) with wgmma.fence before, then wgmma.commit_group and wgmma.wait_group 0, as
PTX ISA 9.7.15.6 prescribes; the shared memory is written by ordinary stores and so is
published to the async proxy with fence.proxy.async before the barrier.

D is compared with a float64 / int64 numpy reference: integers exactly (.satfinite
saturates the result of each instruction, and the inputs drive elements past both ends of
the s32 range), floats to |D - ref| <= rtol * (|A| @ |B| + |C|) + (output
rounding) * |ref| with rtol 2^-16 for f16 / bf16 / tf32 into f32, 2^-9 for e4m3 / e5m2
into f32 and into f16 (tests/gpu/codes.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpu import forms
from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

KSTEPS = 4
KBYTES = 32 * KSTEPS
ES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "u8": 1, "s8": 1}  # b1: 1/8
SWZ = forms.SWIZZLES


def _params() -> list[Any]:
    out = []
    for c in forms.WGMMA_CASES:
        for s in ("none", "128b", "64b", "32b"):
            out.append(pytest.param(c, s, s, True, id=f"{c.name}-{s}"))
        out.append(pytest.param(c, "128b", "128b", False, id=f"{c.name}-128b-scale_d0"))
        mixed = c.a_src == "desc" and c.n == 64 and c.dtype != "f16"
        if mixed and c.atype in ("bf16", "e4m3", "u8"):
            out.append(pytest.param(c, "128b", "32b", True, id=f"{c.name}-a128b-b32b"))
            out.append(pytest.param(c, "none", "64b", True, id=f"{c.name}-anone-b64b"))
    return out


def test_library_builds_every_case(wgmma_lib: Any) -> None:
    built = [wgmma_lib.wgmma_name(i).decode() for i in range(wgmma_lib.wgmma_count())]
    assert built == [c.name for c in forms.WGMMA_CASES]


def _to_bytes(np: Any, codes: Any, typ: str) -> Any:
    """Rows of codes (last axis contiguous) as the bytes shared memory holds."""
    if typ == "b1":
        return np.packbits(codes.astype(np.uint8), axis=-1, bitorder="little")
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32}[ES[typ]]
    return np.ascontiguousarray(codes.astype(width)).view(np.uint8)


@pytest.mark.parametrize(("case", "swz_a", "swz_b", "use_c"), _params())
def test_wgmma(case: forms.WgmmaCase, swz_a: str, swz_b: str, use_c: bool, wgmma_lib: Any,
               torch: Any) -> None:
    import numpy as np

    from gpu import codes

    index = forms.WGMMA_CASES.index(case)
    name = f"{case.name}-{swz_a}-{swz_b}-{use_c}"
    rng = np.random.default_rng(seed_for(name))
    m, n = 64, case.n
    k = KBYTES * 8 if case.atype == "b1" else KBYTES // ES[case.atype]
    a_codes, a = codes.random_codes(case.atype, (m, k), rng, fp8_limit=4.0)
    b_codes, b = codes.random_codes(case.btype, (k, n), rng, fp8_limit=4.0)
    c_codes, c = codes.random_acc(case.dtype, (m, n), rng)
    if case.satfinite:  # D[0, 0] (and D[1, 0] or D[1, 1] for signed types) leave the s32 range
        codes.force_saturation(case.atype, case.btype, a_codes, a, b_codes, b, c_codes, c)
    if not use_c:
        c = np.zeros_like(c)

    a_bytes = _to_bytes(np, a_codes.T if case.trans_a else a_codes, case.atype)  # [K][M] or [M][K]
    b_bytes = _to_bytes(np, b_codes if case.trans_b else b_codes.T, case.btype)  # [K][N] or [N][K]

    dev = torch.device("cuda")

    def put(x: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(x)).to(dev)

    t_a, t_b = put(a_bytes), put(b_bytes)
    t_c = put(c_codes.view(np.int64))
    t_d = torch.full((m, n), -1, dtype=torch.int64, device=dev)
    t_desc = torch.zeros(2 * KSTEPS, dtype=torch.int64, device=dev)
    t_status = torch.full((1,), -1, dtype=torch.int32, device=dev)
    err = wgmma_lib.wgmma_run(index, t_a.data_ptr(), t_b.data_ptr(), t_c.data_ptr(), t_d.data_ptr(),
                              t_desc.data_ptr(), t_status.data_ptr(), SWZ[swz_a], SWZ[swz_b],
                              int(use_c))
    check_cuda(wgmma_lib, err)
    status = int(t_status.item())
    descs = [hex(int(x) & 0xFFFF_FFFF_FFFF_FFFF) for x in t_desc.cpu().tolist()]
    assert status == 0, f"WgmmaDesc::encode_checked refused a descriptor (status {status}): {descs}"
    d_codes = t_d.cpu().numpy().view(np.uint64)
    assert not (d_codes == np.uint64(0xFFFF_FFFF_FFFF_FFFF)).any(), "elements of D were not written"
    d = codes.decode(case.dtype, d_codes)

    if case.satfinite:
        # Each instruction saturates its own result, D = sat(A_i B_i + D), so a sum that
        # leaves the s32 range and comes back differs from saturating the total.
        kc = k // KSTEPS
        ref = c
        saturated = 0
        for st in range(KSTEPS):
            ref = ref + a[:, st * kc:(st + 1) * kc] @ b[st * kc:(st + 1) * kc, :]
            saturated += int(((ref > codes.S32_MAX) | (ref < codes.S32_MIN)).sum())
            ref = np.clip(ref, codes.S32_MIN, codes.S32_MAX)
        assert saturated > 0 or not use_c, "the inputs did not reach the s32 limits"
    else:
        ref = (case.scale_a * a) @ (case.scale_b * b) + c
    scale = (np.abs(a) @ np.abs(b)).astype(np.float64) + np.abs(c)
    problem = codes.compare(d, ref, scale, case.atype, case.dtype)
    assert problem is None, (f"{case.name} swizzle A {swz_a} B {swz_b}: {problem}; "
                             f"descriptors {descs}")
