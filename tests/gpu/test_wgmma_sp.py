"""wgmma.mma_async.sp on an H100 through ptxgen::ptx::wgmma_mma_async_sp and
ptxgen::ptx::wgmma_mma_async_sp_regs, with shared-memory matrix descriptors built by
ptxgen::WgmmaDesc: every sm_90a form the generated header offers (1,056: .f16 into .f16 and
.f32, .bf16, .tf32, the four .e4m3 / .e5m2 pairs into .f16 and .f32 and the four .u8 / .s8
pairs with and without .satfinite, each N, A from a descriptor and A from registers), each
with every sparsity-selector value it allows, plus the negating imm-scale-a / -b and an
N-major B (imm-trans-b) on a few forms, the swizzle modes and scale-d = 0.

The layout, from the PTX ISA (9.7.15.6, "Asynchronous Warpgroup Level Multiply-and-Accumulate
Operation using wgmma.mma_async.sp instruction"):

- 9.7.15.6.1, "Sparse matrix storage": A (M x K) is stored as M x K/2, the non-zero half of
  each row in order; the chunks are 4 elements (2:4) for .f16 / .bf16 / FP8 / .u8 / .s8 and
  2 elements (1:2) for .tf32. A 4-bit metadata field holds the two positions (bits 1:0 and
  3:2, the lower first) of a chunk's non-zero elements; .tf32 uses 0b0100 (element 0) and
  0b1110 (element 1). 9.7.15.6.3 ("wgmma.mma_async.sp"): sp-sel 0 means threads T0, T1 and 1
  threads T2, T3 of each group of four hold the metadata for .f16 / .bf16 / .tf32; for the
  8-bit types sp-sel is 0 and all four threads contribute.
- 9.7.15.6.2, "Matrix fragments for warpgroup-level multiply-accumulate operation with sparse
  matrix A": warp w % 4 provides the metadata of rows 16w..16w+15, laid out per warp as the
  mma.sp figures named there (sparse-mma-metadata-16832-f16bf16, -16816-tf32 and
  -16864-u8s8, Figures 176, 178, 180, 181). With g = lane / 4 and the metadata holders
  T(4g + 2 sel + j): .f16 / .bf16 (K = 32): bits 4c+3..4c hold chunk 4j + c of row g and
  bits 16+4c+3..16+4c the same chunk of row g + 8 (c = 0..3, 16 columns per thread); .tf32
  (K = 16): the same with chunks of 2 (8 columns per thread). 8-bit (K = 64): thread
  T(4g + 2 h + i) holds row g + 8 i, bits 4c+3..4c = chunk 8h + c (32 columns per thread).
  (CUTLASS's ELayout_64x32 / 64x16 / 64x64 in cute/atom/mma_traits_sm90_gmma_sparse.hpp
  describe the same mapping.) A from registers (Figures 175, 177, 179) is the dense wgmma
  fragment of the compressed 64 x K/2 matrix: register r of warp w holds row 16w + g +
  8 (r % 2), bytes 16 (r / 2) + 4 (lane % 4) of its 32.

Each test issues 2 instructions (64 bytes of K of B each; B's K-major rows are 128 bytes),
with wgmma.fence before and wgmma.commit_group / wgmma.wait_group 0 after. Per selector value
the test runs (1) every pattern of the PTX ISA uniformly over A with the metadata-holding
threads' words, while the other threads of each group of four carry another pattern, which
must be ignored (independent of which bits describe which chunk), and (2) a random pattern per
chunk and row, with the metadata words laid out as above and random other patterns in the
threads that do not hold metadata: a field read from the wrong thread, bit or row gives a
wrong D. The reference expands the compressed A with its patterns into the dense 64 x K
matrix; D is compared as in tests/gpu/test_wgmma.py (codes.compare: integers exactly,
.satfinite saturating each instruction's result; floats to rtol * (|A| @ |B| + |C|), with
rtol 2^-8 for FP8 into .f32, see rtol()).
B in K-major rows 64 bytes wide per instruction has no canonical 32-byte-swizzle layout
(9.7.15.5.1: a K-major swizzled slice lies within one swizzle row), so B takes the other
three modes; A (32 bytes per instruction) takes all four.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpu import forms
from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

KSTEPS = forms.WGMMA_SP_KSTEPS
CASES = forms.wgmma_sp_cases()
ES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "u8": 1, "s8": 1}
SWZ = forms.SWIZZLES
POISON = 0xFFFF_FFFF_FFFF_FFFF

#: Patterns of a 4-element chunk (positions of its two non-zero elements) -> metadata field.
PATTERNS = [(i0, i1) for i0 in range(4) for i1 in range(i0 + 1, 4)]
#: .tf32 (chunks of 2 elements): the kept element -> metadata field.
TF32_FIELDS = [0b0100, 0b1110]


def n_patterns(atype: str) -> int:
    return 2 if atype == "tf32" else len(PATTERNS)


def field(atype: str, pattern: int) -> int:
    if atype == "tf32":
        return TF32_FIELDS[pattern]
    i0, i1 = PATTERNS[pattern]
    return i0 | (i1 << 2)


def chunk_elems(atype: str) -> int:
    return 2 if atype == "tf32" else 4


def expand(np: Any, comp: Any, pat: Any, atype: str) -> Any:
    """The dense 64 x K matrix of the compressed 64 x K/2 one with pattern index pat[row,
    chunk] (same dtype as comp)."""
    rows, half = comp.shape
    ce = chunk_elems(atype)
    kept = ce // 2
    dense = np.zeros((rows, 2 * half), dtype=comp.dtype)
    r = np.arange(rows)[:, None]
    for q in range(pat.shape[1]):
        if atype == "tf32":  # pattern 0 keeps element 0 of the pair, 1 element 1
            dense[r[:, 0], ce * q + pat[:, q]] = comp[:, q]
        else:
            first = np.array([PATTERNS[p][0] for p in pat[:, q]])
            second = np.array([PATTERNS[p][1] for p in pat[:, q]])
            dense[r[:, 0], ce * q + first] = comp[:, kept * q]
            dense[r[:, 0], ce * q + second] = comp[:, kept * q + 1]
    return dense


def meta_words(np: Any, pat: Any, atype: str, sel: int) -> Any:
    """sp-meta of each of the 128 threads for each instruction ([KSTEPS][128] uint32) for the
    pattern indices pat[row, chunk]: the PTX ISA layout above, in the threads that hold
    metadata for selector sel; 0 elsewhere."""
    table = np.array([field(atype, p) for p in range(n_patterns(atype))], dtype=np.uint64)
    fields = table[pat]                            # [64, chunks]
    per = fields.shape[1] // KSTEPS                # chunks per instruction (8, or 16 for 8-bit)
    f = fields.reshape(4, 2, 8, KSTEPS, per)      # warp w, row + 8 h, g, instruction, chunk
    words = np.zeros((KSTEPS, 4, 8, 4), dtype=np.uint64)  # instruction, warp, g, lane % 4
    if atype in ("f16", "bf16", "tf32"):
        for j in range(2):   # thread 4g + 2 sel + j: chunks 4j..4j+3 of rows g and g + 8
            for c in range(4):
                for h in range(2):
                    words[:, :, :, 2 * sel + j] |= (f[:, h, :, :, 4 * j + c].transpose(2, 0, 1)
                                                    << np.uint64(16 * h + 4 * c))
    else:
        for t in range(4):   # thread 4g + 2 hh + i: row g + 8 i, chunks 8 hh .. 8 hh + 7
            hh, i = divmod(t, 2)
            for c in range(8):
                chunk = f[:, i, :, :, 8 * hh + c].transpose(2, 0, 1)
                words[:, :, :, t] |= chunk << np.uint64(4 * c)
    return words.reshape(KSTEPS, 128).astype(np.uint32)


def holders(np: Any, atype: str, sel: int) -> Any:
    """Mask of the threads whose sp-meta the selector names."""
    lane = np.arange(128) % 32
    if atype in ("f16", "bf16", "tf32"):
        return (lane % 4) // 2 == sel
    return np.ones(128, dtype=bool)


def rtol(case: forms.WgmmaSpCase) -> float | None:
    """The tolerance of codes.compare, but 2^-8 for FP8 into .f32: the H100's FP8 sums (64
    dense K per instruction) were off by up to 2^-9.9 of |A| @ |B| + |C| (dense wgmma, 32 K per
    instruction: up to 2^-9.98, hence codes.RTOL_F32_FP8 = 2^-9). A misplaced element is
    still an error of about 2^-6 of it."""
    if case.atype in ("e4m3", "e5m2") and case.dtype == "f32":
        return 2.0**-8
    return None


def _to_bytes(np: Any, codes: Any, typ: str) -> Any:
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32}[ES[typ]]
    return np.ascontiguousarray(codes.astype(width)).view(np.uint8)


def _run(case: forms.WgmmaSpCase, libs: Any, torch: Any, sel: int, pat: Any, meta: Any,
         swz_a: str = "128b", swz_b: str = "128b", use_c: bool = True, tag: str = "") -> None:
    """Run the case with pattern indices pat[64, chunks] and sp-meta words meta[KSTEPS][128];
    compare D with the dense reference."""
    import numpy as np

    from gpu import codes

    index = CASES.index(case)
    rng = np.random.default_rng(seed_for(f"{case.name}/{sel}/{swz_a}/{swz_b}/{use_c}/{tag}"))
    m, n, k = 64, case.n, case.k * KSTEPS
    a_codes, a_comp = codes.random_codes(case.atype, (m, k // 2), rng, fp8_limit=4.0)
    b_codes, b = codes.random_codes(case.btype, (k, n), rng, fp8_limit=4.0)
    c_codes, c = codes.random_acc(case.dtype, (m, n), rng)
    if case.satfinite:  # D[0, 0] (and D[1, 0] or D[1, 1] for signed types) leave the s32 range
        codes.force_saturation(case.atype, case.btype, a_codes, a_comp, b_codes, b, c_codes, c)
    if not use_c:
        c = np.zeros_like(c)
    a = expand(np, a_comp, pat, case.atype)

    a_bytes = _to_bytes(np, a_codes, case.atype)                               # [64][K/2]
    b_bytes = _to_bytes(np, b_codes if case.trans_b else b_codes.T, case.btype)  # [K][N] / [N][K]

    dev = torch.device("cuda")

    def put(x: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(x)).to(dev)

    t_a, t_b, t_meta = put(a_bytes), put(b_bytes), put(meta.view(np.int32))
    t_c = put(c_codes.view(np.int64))
    t_d = torch.full((m, n), -1, dtype=torch.int64, device=dev)
    t_desc = torch.zeros(2 * KSTEPS, dtype=torch.int64, device=dev)
    t_status = torch.full((1,), -1, dtype=torch.int32, device=dev)
    lib = libs[forms.wgmma_sp_part(index)]
    err = lib.wgmma_sp_run(index // forms.WGMMA_SP_PARTS, sel, t_a.data_ptr(), t_b.data_ptr(),
                           t_c.data_ptr(), t_meta.data_ptr(), t_d.data_ptr(), t_desc.data_ptr(),
                           t_status.data_ptr(), SWZ[swz_a], SWZ[swz_b], int(use_c))
    check_cuda(lib, err)
    status = int(t_status.item())
    descs = [hex(int(x) & POISON) for x in t_desc.cpu().tolist()]
    assert status == 0, f"WgmmaDesc::encode_checked refused a descriptor (status {status}): {descs}"
    d_codes = t_d.cpu().numpy().view(np.uint64)
    assert not (d_codes == np.uint64(POISON)).any(), "elements of D were not written"
    d = codes.decode(case.dtype, d_codes)

    if case.satfinite:  # each instruction saturates its own result
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
    problem = codes.compare(d, ref, scale, case.atype, case.dtype, rtol=rtol(case))
    assert problem is None, (f"{case.name} sp-sel {sel} ({tag}), swizzle A {swz_a} B {swz_b}: "
                             f"{problem}; descriptors {descs}")


def _chunks(case: forms.WgmmaSpCase) -> int:
    return case.k * KSTEPS // chunk_elems(case.atype)


def _uniform(case: forms.WgmmaSpCase, libs: Any, torch: Any, sel: int, pattern: int,
             other: int, **kw: Any) -> None:
    """Pattern `pattern` everywhere; the threads that do not hold metadata carry `other`."""
    import numpy as np

    pat = np.full((64, _chunks(case)), pattern, dtype=np.int64)
    mine = meta_words(np, pat, case.atype, sel)
    theirs = np.full((KSTEPS, 128), field(case.atype, other) * 0x1111_1111, dtype=np.uint32)
    meta = np.where(holders(np, case.atype, sel)[None, :], mine, theirs).astype(np.uint32)
    assert (mine[:, holders(np, case.atype, sel)]
            == np.uint32(field(case.atype, pattern) * 0x1111_1111)).all()
    _run(case, libs, torch, sel, pat, meta, tag=f"uniform{pattern}/{other}", **kw)


def _random(case: forms.WgmmaSpCase, libs: Any, torch: Any, sel: int, **kw: Any) -> None:
    """A random pattern per row and chunk, laid out in sp-meta as the PTX ISA says; random
    other patterns in the threads that do not hold metadata."""
    import numpy as np

    rng = np.random.default_rng(seed_for(f"{case.name}/pattern/{sel}/{kw}"))
    pat = rng.integers(0, n_patterns(case.atype), (64, _chunks(case)))
    decoy = rng.integers(0, n_patterns(case.atype), (64, _chunks(case)))
    mine = meta_words(np, pat, case.atype, sel)
    # the decoy words as the threads of the other selector value would hold them
    theirs = meta_words(np, decoy, case.atype, 1 - sel) if case.selectors > 1 else mine
    meta = np.where(holders(np, case.atype, sel)[None, :], mine, theirs).astype(np.uint32)
    _run(case, libs, torch, sel, pat, meta, tag="random", **kw)


def test_header_offers_every_sm90_form() -> None:
    """The header's sm_90a sparse wgmma forms are exactly the PTX ISA's (forms.py), each with A
    from a descriptor and from registers: 1,056."""
    got = forms.wgmma_sp_forms()
    assert len(got) == 1056
    for src in ("desc", "regs"):
        names = {c.form for c in got if c.a_src == src}
        assert names == forms.SM90_WGMMA_SP_EXPECTED, (
            f"{src}: missing {sorted(forms.SM90_WGMMA_SP_EXPECTED - names)}; "
            f"extra {sorted(names - forms.SM90_WGMMA_SP_EXPECTED)}")


def test_libraries_build_every_case(wgmma_sp_libs: Any) -> None:
    built: dict[int, tuple[str, int]] = {}
    for part in range(forms.WGMMA_SP_PARTS):
        lib = wgmma_sp_libs[part]
        for i in range(lib.wgmma_sp_count()):
            index = lib.wgmma_sp_index(i)
            assert forms.wgmma_sp_part(index) == part and index // forms.WGMMA_SP_PARTS == i
            built[index] = (lib.wgmma_sp_name(i).decode(), lib.wgmma_sp_selectors(i))
    assert built == {i: (c.name, c.selectors) for i, c in enumerate(CASES)}


def test_selector_out_of_range_is_refused(wgmma_sp_libs: Any) -> None:
    for index, case in enumerate(CASES[:8]):
        lib = wgmma_sp_libs[forms.wgmma_sp_part(index)]
        p = 0
        assert lib.wgmma_sp_run(index // forms.WGMMA_SP_PARTS, case.selectors, p, p, p, p, p, p,
                                p, 1, 1, 1) == -1


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_wgmma_sp(case: forms.WgmmaSpCase, wgmma_sp_libs: Any, torch: Any) -> None:
    """Each selector value: every pattern uniformly (the other threads' metadata ignored),
    then a random pattern per chunk in the PTX ISA's metadata layout."""
    npat = n_patterns(case.atype)
    for sel in range(case.selectors):
        for pattern in range(npat):
            _uniform(case, wgmma_sp_libs, torch, sel, pattern, (pattern + 1) % npat)
        _random(case, wgmma_sp_libs, torch, sel)


def _swizzle_params() -> list[Any]:
    picks = [c for c in CASES if c.n == 64 and c.a_src == "desc" and c.scale_a == 1
             and c.scale_b == 1 and not c.trans_b and not c.satfinite
             and (c.atype, c.btype, c.dtype) in (("bf16", "bf16", "f32"), ("tf32", "tf32", "f32"),
                                                  ("e4m3", "e5m2", "f32"), ("s8", "u8", "s32"))]
    picks += [c for c in CASES if c.trans_b and c.n == 64]
    out = []
    for c in picks:
        for sa in ("none", "128b", "64b", "32b"):
            for sb in ("none", "128b", "64b"):
                out.append(pytest.param(c, sa, sb, id=f"{c.name}-a{sa}-b{sb}"))
    return out


@pytest.mark.parametrize(("case", "swz_a", "swz_b"), _swizzle_params())
def test_wgmma_sp_swizzle(case: forms.WgmmaSpCase, swz_a: str, swz_b: str, wgmma_sp_libs: Any,
                          torch: Any) -> None:
    """A in each swizzle mode, B in none / 128B / 64B, random patterns, each selector."""
    for sel in range(case.selectors):
        _random(case, wgmma_sp_libs, torch, sel, swz_a=swz_a, swz_b=swz_b)


@pytest.mark.parametrize("case", [c for c in CASES if c.n in (8, 256) and c.scale_a == 1
                                  and c.scale_b == 1 and not c.trans_b],
                         ids=lambda c: c.name)
def test_wgmma_sp_scale_d0(case: forms.WgmmaSpCase, wgmma_sp_libs: Any, torch: Any) -> None:
    """scale-d = 0 on the first instruction: D = A * B, the accumulators' garbage ignored."""
    _random(case, wgmma_sp_libs, torch, case.selectors - 1, use_c=False)
