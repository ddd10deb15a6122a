"""cvt packs on an H100 through the generated wrappers of ptxgen/ptx/cvt.hpp only
(kernels/cvt.cu), bit-exact against torch's conversions on the host CPU (c10's software
rounding or the CPU's own instructions: never the GPU's), over every input of the source
type: all 2^32 f32 bit patterns as `a` (and, rotated, as `b`), all 2^32 f16x2 registers, all
2^16 e4m3x2 / e5m2x2 registers.

The PTX ISA's rules (9.7.10.24 cvt) on top of the plain round-to-nearest-even conversion:
`a` goes to the upper half of a pair, `b` to the lower; .satfinite turns a result beyond
MAX_NORM (an infinity) into MAX_NORM of the same sign (for e4m3x2 / e5m2x2 it is mandatory:
the reference clamps the f32 input to +-MAX_NORM before converting, which is the same
rounding, since torch's e4m3fn conversion gives NaN rather than saturating); .relu clamps
a negative result to +0 (a -0 result too: read as max(result, +0)) and makes a NaN result
the canonical NaN (0x7fff for f16 / bf16, 0x7f for e4m3 / e5m2); any other NaN result only
has to be a NaN (the document leaves its bits open). .rz for bf16x2 (the same exponent range
as f32) is truncation of the low 16 bits, computed exactly on the host.

e2m1x2 and ue8m0x2 are not on sm_90a (ptxas 13.0 and 13.5: "not supported on .target
'sm_90a'"), nor bf16x2 from e4m3x2 / e5m2x2: no GPU test here.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest

pytestmark = pytest.mark.gpu

#: The variants of kernels/cvt.cu, in its order: (PTX instruction, kind); kind 0: f32 pair
#: -> 32 bits, 1: f32 pair -> 16 bits, 2: f16x2 -> 16 bits, 3: 16 bits -> f16x2.
VARIANTS = (
    ("cvt.rn.bf16x2.f32", 0), ("cvt.rn.relu.bf16x2.f32", 0), ("cvt.rn.satfinite.bf16x2.f32", 0),
    ("cvt.rn.relu.satfinite.bf16x2.f32", 0), ("cvt.rz.bf16x2.f32", 0),
    ("cvt.rn.f16x2.f32", 0), ("cvt.rn.relu.f16x2.f32", 0), ("cvt.rn.satfinite.f16x2.f32", 0),
    ("cvt.rn.relu.satfinite.f16x2.f32", 0),
    ("cvt.rn.satfinite.e4m3x2.f32", 1), ("cvt.rn.satfinite.relu.e4m3x2.f32", 1),
    ("cvt.rn.satfinite.e5m2x2.f32", 1), ("cvt.rn.satfinite.relu.e5m2x2.f32", 1),
    ("cvt.rn.satfinite.e4m3x2.f16x2", 2), ("cvt.rn.satfinite.relu.e4m3x2.f16x2", 2),
    ("cvt.rn.satfinite.e5m2x2.f16x2", 2), ("cvt.rn.satfinite.relu.e5m2x2.f16x2", 2),
    ("cvt.rn.f16x2.e4m3x2", 3), ("cvt.rn.relu.f16x2.e4m3x2", 3),
    ("cvt.rn.f16x2.e5m2x2", 3), ("cvt.rn.relu.f16x2.e5m2x2", 3),
)
CHUNK = 1 << 27
ROLL = 40_503  # b[i] = a[i - ROLL] within a chunk: each half sees every f32 pattern

#: Per destination format: the exponent field, mantissa field, sign bit, MAX_NORM, the
#: canonical NaN (.relu) and the largest magnitude that MAX_NORM's rounding covers.
FORMATS = {
    "bf16": dict(exp=0x7F80, man=0x007F, sign=0x8000, max=0x7F7F, canon=0x7FFF),
    "f16": dict(exp=0x7C00, man=0x03FF, sign=0x8000, max=0x7BFF, canon=0x7FFF),
    "e4m3": dict(exp=0x78, man=0x07, sign=0x80, max=0x7E, canon=0x7F),
    "e5m2": dict(exp=0x7C, man=0x03, sign=0x80, max=0x7B, canon=0x7F),
}
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("cvt")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.cvt_count.restype = ctypes.c_int
    lib.cvt_name.restype = ctypes.c_char_p
    lib.cvt_name.argtypes = [ctypes.c_int]
    lib.cvt_run.restype = ctypes.c_int
    lib.cvt_run.argtypes = [ctypes.c_int, ctypes.c_longlong] + [ctypes.c_void_p] * 3
    return lib


def _isnan(h: Any, fmt: str) -> Any:
    f = FORMATS[fmt]
    if fmt == "e4m3":  # S.1111.111 only
        return (h & 0x7F) == 0x7F
    return ((h & f["exp"]) == f["exp"]) & ((h & f["man"]) != 0)


def _expect(ref: Any, fmt: str, relu: bool, sat: bool) -> tuple[Any, Any]:
    """The expected 16- or 8-bit results from the plain RN conversion ``ref`` (int32
    tensor), and where any NaN is accepted."""
    f = FORMATS[fmt]
    e = ref.clone()
    nan = _isnan(e, fmt)
    if sat and fmt in ("bf16", "f16"):
        inf = (e & ~f["sign"]) == f["exp"]
        e = e.where(~inf, (e & f["sign"]) | f["max"])
    if relu:
        e = e.where(~(((e & f["sign"]) != 0) & ~nan), 0)
        e = e.where(~nan, f["canon"])
        return e, nan & False
    return e, nan


def _mismatch(got: Any, exp: Any, anynan: Any, fmt: str) -> Any:
    return (anynan & ~_isnan(got, fmt)) | (~anynan & (got != exp))


def _fmt_of(name: str) -> tuple[str, bool, bool]:
    dst = name.split(".")[-2]
    fmt = {"bf16x2": "bf16", "f16x2": "f16", "e4m3x2": "e4m3", "e5m2x2": "e5m2"}[dst]
    return fmt, ".relu" in name, ".satfinite" in name


def _sat(x: Any, fmt: str) -> Any:
    return x.clamp(-FP8_MAX[fmt], FP8_MAX[fmt])


def _bits16(t: Any, torch: Any) -> Any:
    return t.view(torch.int16).to(torch.int32) & 0xFFFF


def _bits8(t: Any, torch: Any) -> Any:
    return t.view(torch.uint8).to(torch.int32)


def _run(torch: Any, v: int, a: Any, b: Any, out_dtype: Any) -> Any:
    from gpu.runtime import check_cuda

    lib = _lib()
    out = torch.empty(a.numel(), dtype=out_dtype, device=a.device)
    check_cuda(lib, lib.cvt_run(v, a.numel(), a.data_ptr(), None if b is None else b.data_ptr(),
                                out.data_ptr()))
    return out


class _Tally:
    def __init__(self) -> None:
        self.checked: dict[str, int] = {n: 0 for n, _ in VARIANTS}
        self.bad: dict[str, int] = {n: 0 for n, _ in VARIANTS}
        self.examples: dict[str, list[str]] = {n: [] for n, _ in VARIANTS}

    def add(self, name: str, bad: Any, show: Any) -> None:
        self.checked[name] += int(bad.numel())
        count = int(bad.sum())
        self.bad[name] += count
        if count and len(self.examples[name]) < 6:
            idx = bad.nonzero().flatten()[:6].tolist()
            self.examples[name] += [show(i) for i in idx]


def _sweep_f32(torch: Any, tally: _Tally) -> None:
    dev = torch.device("cuda")
    for start in range(0, 1 << 32, CHUNK):
        x = torch.arange(start, start + CHUNK, dtype=torch.int64, device=dev)
        a = (x - (x >= 1 << 31).to(torch.int64) * (1 << 32)).to(torch.int32)
        del x
        xc = a.cpu()
        xf = xc.view(torch.float32)
        # the references, on the host CPU: plain RN conversions, bf16 RZ by truncation
        refs = {
            "bf16": _bits16(xf.to(torch.bfloat16), torch),
            "f16": _bits16(xf.to(torch.float16), torch),
            "bf16rz": ((xc >> 16) & 0xFFFF).where(~xf.isnan(), 0x7FFF),  # a NaN stays a NaN
            "e4m3": _bits8(_sat(xf, "e4m3").to(torch.float8_e4m3fn), torch),
            "e5m2": _bits8(_sat(xf, "e5m2").to(torch.float8_e5m2), torch),
        }
        refs = {k: r.to(dev) for k, r in refs.items()}
        b = a.roll(ROLL)
        af, bf = a.view(torch.float32), b.view(torch.float32)
        for v, (name, kind) in enumerate(VARIANTS):
            if kind not in (0, 1):
                continue
            fmt, relu, sat = _fmt_of(name)
            ref = refs["bf16rz" if ".rz." in name else fmt]
            if kind == 0:
                got = _run(torch, v, af, bf, torch.int32)
                hi, lo, shift, m = (got >> 16) & 0xFFFF, got & 0xFFFF, 16, 0xFFFF
            else:
                got = _bits16(_run(torch, v, af, bf, torch.int16), torch)
                hi, lo, shift, m = (got >> 8) & 0xFF, got & 0xFF, 8, 0xFF
            bad = torch.zeros_like(got, dtype=torch.bool)
            for half, src in ((hi, ref), (lo, ref.roll(ROLL))):
                e, anynan = _expect(src, fmt, relu, sat)
                bad |= _mismatch(half, e, anynan, fmt)
            e_hi, _ = _expect(ref, fmt, relu, sat)
            e_lo, _ = _expect(ref.roll(ROLL), fmt, relu, sat)

            def show(i: int, a=a, b=b, got=got, e_hi=e_hi, e_lo=e_lo,
                     shift=shift, m=m) -> str:
                return (f"a={int(a[i]) & 0xFFFFFFFF:#010x} b={int(b[i]) & 0xFFFFFFFF:#010x} "
                        f"got={int(got[i]) & ((m << shift) | m):#x} expected "
                        f"{int(e_hi[i]):#x}:{int(e_lo[i]):#x}")

            tally.add(name, bad, show)


def _sweep_f16x2(torch: Any, tally: _Tally) -> None:
    """All 2^32 f16x2 registers: each half's reference from a table of the 2^16 f16 values."""
    dev = torch.device("cuda")
    h = torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(torch.float16).float()
    tables = {fmt: _bits8(_sat(h, fmt).to(
        torch.float8_e4m3fn if fmt == "e4m3" else torch.float8_e5m2), torch).to(dev)
        for fmt in ("e4m3", "e5m2")}
    for start in range(0, 1 << 32, CHUNK):
        x = torch.arange(start, start + CHUNK, dtype=torch.int64, device=dev)
        hi_idx, lo_idx = x >> 16, x & 0xFFFF
        a = (x - (x >= 1 << 31).to(torch.int64) * (1 << 32)).to(torch.int32)
        for v, (name, kind) in enumerate(VARIANTS):
            if kind != 2:
                continue
            fmt, relu, sat = _fmt_of(name)
            got = _bits16(_run(torch, v, a, None, torch.int16), torch)
            e_hi, n_hi = _expect(tables[fmt][hi_idx], fmt, relu, sat)
            e_lo, n_lo = _expect(tables[fmt][lo_idx], fmt, relu, sat)
            bad = (_mismatch((got >> 8) & 0xFF, e_hi, n_hi, fmt)
                   | _mismatch(got & 0xFF, e_lo, n_lo, fmt))

            def show(i: int, x=x, got=got, e_hi=e_hi, e_lo=e_lo) -> str:
                return (f"a={int(x[i]):#010x} got={int(got[i]):#06x} "
                        f"expected {int(e_hi[i]):#04x}:{int(e_lo[i]):#04x}")

            tally.add(name, bad, show)


def _sweep_fp8(torch: Any, tally: _Tally) -> None:
    """All 2^16 e4m3x2 / e5m2x2 registers to f16x2 (exact: every e4m3 / e5m2 value is an
    f16 value)."""
    dev = torch.device("cuda")
    byte = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    x = torch.arange(1 << 16, dtype=torch.int64, device=dev)
    a = x.to(torch.int32).to(torch.int16)
    for v, (name, kind) in enumerate(VARIANTS):
        if kind != 3:
            continue
        src = name.split(".")[-1][:4]
        _, relu, _ = _fmt_of(name)
        table = _bits16(byte.view(torch.float8_e4m3fn if src == "e4m3" else torch.float8_e5m2)
                        .to(torch.float16), torch).to(dev)
        got = _run(torch, v, a, None, torch.int32)
        e_hi, n_hi = _expect(table[x >> 8], "f16", relu, False)
        e_lo, n_lo = _expect(table[x & 0xFF], "f16", relu, False)
        bad = (_mismatch((got >> 16) & 0xFFFF, e_hi, n_hi, "f16")
               | _mismatch(got & 0xFFFF, e_lo, n_lo, "f16"))

        def show(i: int, got=got, e_hi=e_hi, e_lo=e_lo) -> str:
            return (f"a={i:#06x} got={int(got[i]) & 0xFFFFFFFF:#010x} "
                    f"expected {int(e_hi[i]):#06x}:{int(e_lo[i]):#06x}")

        tally.add(name, bad, show)


@pytest.fixture(scope="module")
def sweep(torch: Any) -> _Tally:
    lib = _lib()
    assert [(lib.cvt_name(v).decode(), k) for v, (_, k) in enumerate(VARIANTS)] == list(VARIANTS)
    assert lib.cvt_count() == len(VARIANTS)
    tally = _Tally()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    _sweep_fp8(torch, tally)
    _sweep_f16x2(torch, tally)
    _sweep_f32(torch, tally)
    return tally


@pytest.mark.parametrize("name", [n for n, _ in VARIANTS])
def test_cvt_is_bit_exact_over_every_input(sweep: _Tally, name: str) -> None:
    kind = dict(VARIANTS)[name]
    assert sweep.checked[name] == (1 << 16 if kind == 3 else 1 << 32)
    assert sweep.bad[name] == 0, (
        f"{name}: {sweep.bad[name]} wrong results, e.g. {sweep.examples[name]}")
