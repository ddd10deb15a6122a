"""Random operands as raw bit patterns ("codes") and their exact values, for the GPU tests.

Every PTX element type is produced and decoded here with numpy alone (bf16 by truncating
float32, tf32 by clearing the 13 low mantissa bits, e4m3 / e5m2 by their bit formulas),
so the reference never depends on the device. Imported lazily by the test functions.
"""

from __future__ import annotations

from functools import cache

import numpy as np

U64 = np.uint64


def _fp8_value(code: int, fmt: str) -> float:
    s = -1.0 if code & 0x80 else 1.0
    if fmt == "e4m3":  # e4m3fn: bias 7, no infinities, S.1111.111 is NaN
        e, m = (code >> 3) & 0xF, code & 7
        if e == 15 and m == 7:
            return float("nan")
        return s * (m / 8 * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    e, m = (code >> 2) & 0x1F, code & 3  # e5m2: bias 15, IEEE-like
    if e == 31:
        return float("nan") if m else s * float("inf")
    return s * (m / 4 * 2.0**-14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15))


@cache
def fp8_table(fmt: str) -> np.ndarray:
    return np.array([_fp8_value(c, fmt) for c in range(256)], dtype=np.float64)


def random_codes(typ: str, shape: tuple[int, ...], rng: np.random.Generator,
                 *, fp8_limit: float = 8.0) -> tuple[np.ndarray, np.ndarray]:
    """(codes as uint64, values as float64 or int64) of random elements of type ``typ``."""
    n = int(np.prod(shape))
    if typ == "f16":
        v = rng.uniform(-1, 1, n).astype(np.float16)
        codes, vals = v.view(np.uint16).astype(U64), v.astype(np.float64)
    elif typ == "bf16":
        bits = rng.uniform(-1, 1, n).astype(np.float32).view(np.uint32) >> np.uint32(16)
        codes = bits.astype(U64)
        vals = (bits << np.uint32(16)).view(np.float32).astype(np.float64)
    elif typ in ("tf32", "f32"):
        f = rng.standard_normal(n).astype(np.float32)
        bits = f.view(np.uint32)
        if typ == "tf32":
            bits = bits & np.uint32(0xFFFFE000)
        codes, vals = bits.astype(U64), bits.view(np.float32).astype(np.float64)
    elif typ in ("e4m3", "e5m2"):
        table = fp8_table(typ)
        ok = np.flatnonzero(np.isfinite(table) & (np.abs(table) <= fp8_limit))
        c = rng.choice(ok, n)
        codes, vals = c.astype(U64), table[c]
    elif typ == "f64":
        v = rng.standard_normal(n)
        codes, vals = v.view(U64).copy(), v
    else:
        lo, hi, bits = {"s8": (-128, 128, 8), "u8": (0, 256, 8), "s4": (-8, 8, 4),
                        "u4": (0, 16, 4), "b1": (0, 2, 1),
                        "s32": (-(1 << 20), 1 << 20, 32)}[typ]
        v = rng.integers(lo, hi, n, dtype=np.int64)
        codes, vals = (v & ((1 << bits) - 1)).astype(U64), v
    return codes.reshape(shape), vals.reshape(shape)


def decode(typ: str, codes: np.ndarray) -> np.ndarray:
    """Values (float64 or int64) of accumulator codes of type ``typ``."""
    c = np.asarray(codes, dtype=U64)
    if typ == "f16":
        return c.astype(np.uint16).view(np.float16).astype(np.float64)
    if typ == "f32":
        return c.astype(np.uint32).view(np.float32).astype(np.float64)
    if typ == "s32":
        return c.astype(np.uint32).view(np.int32).astype(np.int64)
    if typ == "f64":
        return c.view(np.float64)
    raise ValueError(typ)


def encode_acc(typ: str, vals: np.ndarray) -> np.ndarray:
    """Codes of accumulator values (for C)."""
    if typ == "f16":
        return vals.astype(np.float16).view(np.uint16).astype(U64)
    if typ == "f32":
        return vals.astype(np.float32).view(np.uint32).astype(U64)
    if typ == "s32":
        return (vals.astype(np.int64) & 0xFFFFFFFF).astype(U64)
    if typ == "f64":
        return vals.astype(np.float64).view(U64).copy()
    raise ValueError(typ)


def random_acc(typ: str, shape: tuple[int, ...],
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(codes, exact values) of a random C of accumulator type ``typ``."""
    if typ == "f16":
        vals = rng.uniform(-1, 1, shape).astype(np.float16).astype(np.float64)
    elif typ == "f32":
        vals = rng.standard_normal(shape).astype(np.float32).astype(np.float64)
    elif typ == "s32":
        vals = rng.integers(-(1 << 20), 1 << 20, shape, dtype=np.int64)
    else:
        vals = rng.standard_normal(shape)
    return encode_acc(typ, vals), vals


#: |D - ref| <= RTOL[...] * (|A| @ |B| + |C|) + (output rounding) * |ref| for floats.
#: Tight enough that a misplaced element (an error of about 2 / K of that scale) fails.
RTOL_F64 = 2.0**-44
RTOL_F32 = 2.0**-16      # f16 / bf16 / tf32 inputs, f32 accumulators
# e4m3 / e5m2 inputs, f32 accumulators: the tensor cores add fp8 products with reduced
# precision. 2^-10 was exceeded on the H100 by one element of 4096 (wgmma m64n64k32 e4m3,
# PTXGEN_GPU_SEED=300318243: 33.09375 against 33.14207, 0.99 x 2^-9 of |A| @ |B|; the same
# with the headers of 5dfc687), so 2^-9: still 8x below a misplaced element's 2 / K.
RTOL_F32_FP8 = 2.0**-9
RTOL_F16 = 2.0**-9       # f16 accumulators
OUT_ROUND = {"f16": 2.0**-11, "f32": 2.0**-24, "f64": 2.0**-53}


def rtol_for(atype: str, dtype: str) -> float:
    if dtype == "f64":
        return RTOL_F64
    if dtype == "f16":
        return RTOL_F16
    return RTOL_F32_FP8 if atype in ("e4m3", "e5m2") else RTOL_F32


def compare(d: np.ndarray, ref: np.ndarray, scale: np.ndarray, atype: str,
            dtype: str, rtol: float | None = None) -> str | None:
    """None when D matches, else a description of the first mismatches (floats: rtol
    overrides rtol_for(atype, dtype))."""
    if dtype == "s32":
        bad = np.argwhere(d != ref)
        if bad.size == 0:
            return None
        return f"{len(bad)} of {d.size} wrong; first at {[tuple(x) for x in bad[:5]]}: " + \
               ", ".join(f"{d[tuple(x)]} != {ref[tuple(x)]}" for x in bad[:5])
    tol = (rtol_for(atype, dtype) if rtol is None else rtol) * scale + \
        OUT_ROUND[dtype] * np.abs(ref)
    err = np.abs(d - ref)
    bad = np.argwhere(~(err <= tol))
    if bad.size == 0:
        return None
    return (f"{len(bad)} of {d.size} outside tolerance; first at {[tuple(x) for x in bad[:5]]}: "
            + ", ".join(f"{d[tuple(x)]!r} vs {ref[tuple(x)]!r} (tol {tol[tuple(x)]:.3g})"
                        for x in bad[:5]))


_INT_RANGE = {"s8": (-128, 127, 8), "u8": (0, 255, 8), "s4": (-8, 7, 4), "u4": (0, 15, 4)}
S32_MAX, S32_MIN = (1 << 31) - 1, -(1 << 31)


def force_saturation(atype: str, btype: str, a_codes: np.ndarray, a: np.ndarray,
                     b_codes: np.ndarray, b: np.ndarray, c_codes: np.ndarray,
                     c: np.ndarray) -> None:
    """For .satfinite: make D[0, 0] overflow above the s32 range and, where a signed operand
    allows, D[1, 0] or D[1, 1] below it, whatever the random draw (in place; the last two
    axes are rows x K for A, K x columns for B and C)."""

    def put(codes: np.ndarray, vals: np.ndarray, typ: str, idx: tuple, v: int) -> None:
        vals[idx] = v
        codes[idx] = np.uint64(v & ((1 << _INT_RANGE[typ][2]) - 1))

    a_lo, a_hi, _ = _INT_RANGE[atype]
    b_lo, b_hi, _ = _INT_RANGE[btype]
    put(a_codes, a, atype, (..., 0, slice(None)), a_hi)   # row 0 of A: largest
    put(b_codes, b, btype, (..., slice(None), 0), b_hi)   # column 0 of B: largest
    c[..., 0, 0] = S32_MAX - 5
    if a_lo < 0:                                           # row 1 of A: most negative
        put(a_codes, a, atype, (..., 1, slice(None)), a_lo)
        c[..., 1, 0] = S32_MIN + 5
    elif b_lo < 0:                                         # column 1 of B: most negative
        put(a_codes, a, atype, (..., 1, slice(None)), a_hi)
        put(b_codes, b, btype, (..., slice(None), 1), b_lo)
        c[..., 1, 1] = S32_MIN + 5
    c_codes[...] = encode_acc("s32", c)
