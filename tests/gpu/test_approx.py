"""rcp / ex2 / lg2 / tanh .approx.f32 on an H100 through the generated wrappers of
ptxgen/ptx/math.hpp only (kernels/approx.cu), over all 2^32 f32 inputs, each result held
against a float64 reference (torch on the GPU; its error, below 2^-50 relative, is far
under the bounds) and the bound the PTX ISA 9.4 states for the instruction:

- rcp.approx.f32 (9.7.3.13): "the maximum ulp error is 1 across the full range of inputs";
- ex2.approx.f32 (9.7.3.21): "maximum ulp error is 2 ulp from correctly rounded result
  across the full range of inputs";
- lg2.approx.f32 (9.7.3.20): "maximum absolute error is 2^-22 when the input operand is in
  the range (0.5, 2). For positive finite inputs outside of this interval, maximum relative
  error is 2^-22";
- tanh.approx.f32 (9.7.3.22): "maximum relative error over the entire floating point range
  is 2^-11".

and on 16-bit types, over all 2^16 inputs (the x2 forms: every value in each half):

- tanh.approx.{f16, bf16} (9.7.4.9): "maximum absolute error for .f16 type is 2^-10.987
  ... for .bf16 type is 2^-8";
- ex2.approx.f16 / ex2.approx.ftz.bf16 (9.7.4.10): "maximum relative error for .f16 type
  is 2^-9.9 ... for .bf16 type is 2^-7". A relative bound cannot hold where the result is
  below the format's smallest normal (f16 subnormals are 2^-24 apart; .ftz.bf16 flushes):
  there the test's own reading is an absolute error of at most that spacing (2^-24 for
  f16, 2^-126 for bf16); a result beyond the largest finite value may be +Inf.

The ulp bounds count the distance from the correctly rounded result (the float64 reference
rounded to f32) in representable f32 values, subnormals included (no .ftz: "subnormal
numbers are supported"). Each section's table of special values is checked exactly (NaN:
any NaN). The worst error seen is in the assertion message and printed.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest

pytestmark = pytest.mark.gpu

OPS = ("rcp", "ex2", "lg2", "tanh")
CHUNK = 1 << 27


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("approx")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.approx_run.restype = ctypes.c_int
    lib.approx_run.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p]
    return lib


def _ordinal(bits: Any, torch: Any) -> Any:
    """f32 bit patterns (int32) -> integers in the order of the values (+0 and -0 both 0)."""
    b = bits.to(torch.int64)
    return torch.where(b < 0, -(b & 0x7FFFFFFF), b)


def _check(op: str, x: Any, got: Any, torch: Any) -> tuple[Any, float]:
    """(where the result breaks the bound or the special values, the worst error seen in
    the bound's unit)."""
    x64, g64 = x.double(), got.double()
    ref = {"rcp": lambda: 1.0 / x64, "ex2": lambda: torch.exp2(x64),
           "lg2": lambda: torch.log2(x64), "tanh": lambda: torch.tanh(x64)}[op]()
    nan_ref = ref.isnan()
    bad = nan_ref != got.isnan()
    ok = ~nan_ref
    if op in ("rcp", "ex2"):
        cr = ref.float()
        dist = (_ordinal(got.view(torch.int32), torch)
                - _ordinal(cr.view(torch.int32), torch)).abs()
        tol = 1 if op == "rcp" else 2
        bad |= ok & (dist > tol)
        worst = float(dist[ok].max()) if ok.any() else 0.0
        # the special values: exact
        inf = x.isinf() | (x == 0)  # the sections' tables of special values
        bad |= inf & ok & (got != cr)
        return bad, worst
    finite = ok & ref.isfinite()
    err = (g64 - ref).abs()
    if op == "lg2":
        inside = finite & (x > 0.5) & (x < 2.0)
        outside = finite & ~inside
        scaled = torch.where(inside, err, err / ref.abs()) * 2.0**22
        bad |= (inside | outside) & (scaled > 1.0)
        bad |= ok & ~ref.isfinite() & (got != ref.float())  # +-0 -> -Inf, +Inf -> +Inf
    else:  # tanh
        zero = finite & (ref == 0)
        scaled = torch.where(zero, err, err / ref.abs().clamp_min(1e-300)) * 2.0**11
        bad |= finite & ~zero & (scaled > 1.0)
        bad |= zero & (got != 0)
        bad |= x.isinf() & (got != x.sign())  # +-Inf -> +-1.0
    worst = float(scaled[finite].max()) if finite.any() else 0.0
    return bad, worst


OPS16 = ("tanh.approx.f16", "tanh.approx.bf16", "ex2.approx.f16", "ex2.approx.ftz.bf16",
         "tanh.approx.f16x2", "tanh.approx.bf16x2", "ex2.approx.f16x2", "ex2.approx.ftz.bf16x2")


def _check16(op: str, h: Any, got: Any, torch: Any) -> tuple[Any, float]:
    """h, got: int32 tensors of 16-bit patterns; (wrong, worst error / bound)."""
    bf = "bf16" in op
    dtype = torch.bfloat16 if bf else torch.float16

    def value(bits: Any) -> Any:
        return bits.to(torch.int16).view(dtype).double()

    x, g = value(h), value(got)
    ref = torch.tanh(x) if op.startswith("tanh") else torch.exp2(x)
    bad = x.isnan() != g.isnan()
    ok = ~x.isnan()
    if op.startswith("tanh"):
        bound = 2.0**-8 if bf else 2.0**-10.987
        scaled = (g - ref).abs() / bound
        bad |= ok & x.isinf() & (g != x.sign())
    else:
        bound = 2.0**-7 if bf else 2.0**-9.9
        tiny, spacing = (2.0**-126, 2.0**-126) if bf else (2.0**-14, 2.0**-24)
        big = float(torch.finfo(dtype).max)
        err = (g - ref).abs()
        scaled = torch.where(ref >= tiny, err / ref.abs().clamp_min(1e-300) / bound,
                             err / spacing)
        over = ok & (ref > big) & g.isinf() & (g > 0)
        scaled = torch.where(over | x.isinf(), 0.0, scaled)
        bad |= ok & x.isinf() & (g != torch.where(x > 0, float("inf"), 0.0))
    fin = ok & ~x.isinf()
    bad |= fin & ~(scaled <= 1.0)
    return bad, float(scaled[fin].max())


#: Where the GPU breaks the document's bound (an H200, driver 580.159.04): tanh.approx.bf16
#: of +-0.74609375 (0x3f3f / 0xbf3f) gives +-0.62890625 (0x3f21), one bf16 ulp below the
#: correctly rounded +-0.6328125: |error| = 2^-7.99991, just past 2^-8 (by 0.0065%). The
#: other 65,534 inputs are within it. Held apart by a strict xfail below.
BF16_TANH_BEYOND = (0x3F3F, 0xBF3F)


def _run16(torch: Any, op: str, x: Any) -> list[tuple[Any, Any]]:
    """[(input halves, result halves)] of op over the 16-bit patterns x."""
    from gpu.runtime import check_cuda

    lib = _lib()
    lib.approx16_run.restype = ctypes.c_int
    lib.approx16_run.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    other = (x.flip(0) + 40_503) & 0xFFFF
    a = (other << 16) | x if op.endswith("x2") else x
    out = torch.empty_like(a)
    check_cuda(lib, lib.approx16_run(OPS16.index(op), a.numel(), a.data_ptr(), out.data_ptr()))
    halves = [(x, out & 0xFFFF)]
    if op.endswith("x2"):
        halves.append((other, (out >> 16) & 0xFFFF))
    return halves


@pytest.mark.parametrize("op", OPS16)
def test_approx_16_bit_forms_within_the_isas_stated_error(torch: Any, op: str) -> None:
    x = torch.arange(1 << 16, dtype=torch.int32, device="cuda")
    failures, worst = [], 0.0
    for h, g in _run16(torch, op, x):
        bad, w = _check16(op, h, g, torch)
        if op.startswith("tanh.approx.bf16"):
            for v in BF16_TANH_BEYOND:  # recorded: test_tanh_bf16_recorded_inputs
                bad &= h != v
        worst = max(worst, w)
        if bad.any():
            i = int(bad.nonzero()[0])
            failures.append(f"{int(bad.sum())} wrong, e.g. {int(h[i]):#06x} -> {int(g[i]):#06x}")
    print(f"{op}: worst {worst:.6g} of the bound")
    assert not failures, f"{op}: {failures}"


@pytest.mark.xfail(strict=True, reason="tanh.approx.bf16 of +-0.74609375: error 2^-7.99991 "
                   "> the document's 2^-8 (an H200)")
@pytest.mark.parametrize("op", ["tanh.approx.bf16", "tanh.approx.bf16x2"])
def test_tanh_bf16_recorded_inputs(torch: Any, op: str) -> None:
    x = torch.tensor(BF16_TANH_BEYOND, dtype=torch.int32, device="cuda")
    for h, g in _run16(torch, op, x)[:1]:
        bad, _ = _check16(op, h, g, torch)
        assert not bad.any(), [f"{int(a):#06x} -> {int(b):#06x}" for a, b in zip(h, g, strict=True)]


@pytest.fixture(scope="module")
def sweep(torch: Any) -> dict[str, tuple[int, int, float, list[str]]]:
    from gpu.runtime import check_cuda

    lib = _lib()
    dev = torch.device("cuda")
    tally = {op: [0, 0, 0.0, []] for op in OPS}
    for start in range(0, 1 << 32, CHUNK):
        i = torch.arange(start, start + CHUNK, dtype=torch.int64, device=dev)
        x = (i - (i >= 1 << 31).to(torch.int64) * (1 << 32)).to(torch.int32).view(torch.float32)
        del i
        for k, op in enumerate(OPS):
            got = torch.empty_like(x)
            check_cuda(lib, lib.approx_run(k, x.numel(), x.data_ptr(), got.data_ptr()))
            bad, worst = _check(op, x, got, torch)
            t = tally[op]
            t[0] += x.numel()
            t[1] += int(bad.sum())
            t[2] = max(t[2], worst)
            if t[1] and len(t[3]) < 6:
                for j in bad.nonzero().flatten()[:6].tolist():
                    bits = int(x.view(torch.int32)[j]) & 0xFFFFFFFF
                    t[3].append(f"x={float(x[j])!r} ({bits:#010x}) -> {float(got[j])!r}")
    for op, t in tally.items():
        unit = "ulp" if op in ("rcp", "ex2") else "of the bound"
        print(f"{op}.approx.f32: {t[0]} inputs, {t[1]} beyond the bound, worst {t[2]:.4g} {unit}")
    return {op: (t[0], t[1], t[2], t[3]) for op, t in tally.items()}


@pytest.mark.parametrize("op", OPS)
def test_approx_within_the_isas_stated_error_over_every_f32(sweep: Any, op: str) -> None:
    checked, bad, worst, examples = sweep[op]
    assert checked == 1 << 32
    assert bad == 0, (
        f"{op}.approx.f32: {bad} results beyond the bound (worst {worst:.4g}), e.g. {examples}")
