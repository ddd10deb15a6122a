"""prmt, lop3, bfe and bfi on an H100 through the generated wrappers of ptxgen/ptx/bits.hpp
only (kernels/bits.cu), each result computed on the host from the PTX ISA 9.4's semantics:
prmt (9.7.10.7: the generic 4 x 4-bit selectors with sign replication, and the f4e / b4e /
rc8 / ecl / ecr / rc16 modes' tables), lop3 (9.7.8: all 256 truth tables: bit i of the
immediate is the result for a, b, c bits with i = 4a + 2b + c), bfe (9.7.1.20) and bfi
(9.7.1.21) with pos and len over 0 ... 255 (only their low 8 bits count: random high bits
too), including fields that run past the msb and zero lengths.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest

from gpu.runtime import seed_for

pytestmark = pytest.mark.gpu

OPS = ("prmt", "prmt.f4e", "prmt.b4e", "prmt.rc8", "prmt.ecl", "prmt.ecr", "prmt.rc16",
       "bfe.u32", "bfe.s32", "bfe.u64", "bfe.s64", "bfi.b32", "bfi.b64")
N = 2048
#: prmt's modes: the source byte of d.b3, d.b2, d.b1, d.b0 for c[1:0] = 0 ... 3.
MODES = {
    "f4e": ((3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)),
    "b4e": ((5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)),
    "rc16": ((1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)),
}
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("bits")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.bits_ops.restype = ctypes.c_int
    lib.bits_run.restype = ctypes.c_int
    lib.bits_run.argtypes = [ctypes.c_int, ctypes.c_int] + [ctypes.c_void_p] * 5
    lib.lop3_run.restype = ctypes.c_int
    lib.lop3_run.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 4
    return lib


def _prmt(mode: str, a: int, b: int, c: int) -> int:
    tmp = (b << 32) | a
    d = 0
    for k in range(4):
        if mode == "prmt":
            ctl = (c >> (4 * k)) & 0xF
            byte = (tmp >> (8 * (ctl & 7))) & 0xFF
            if ctl & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            src = MODES[mode.split(".")[1]][c & 3][3 - k]
            byte = (tmp >> (8 * src)) & 0xFF
        d |= byte << (8 * k)
    return d


def _bfe(typ: str, a: int, b: int, c: int) -> int:
    msb = 31 if typ.endswith("32") else 63
    pos, ln = b & 0xFF, c & 0xFF
    sbit = 0 if typ[0] == "u" or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(msb + 1):
        bit = (a >> (pos + i)) & 1 if i < ln and pos + i <= msb else sbit
        d |= bit << i
    return d


def _bfi(typ: str, a: int, b: int, c: int, d: int) -> int:
    msb = 31 if typ == "b32" else 63
    pos, ln = c & 0xFF, d & 0xFF
    f = b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


def _inputs(np: Any, name: str, high: bool = False) -> tuple[Any, Any, Any, Any]:
    rng = np.random.default_rng(seed_for(name))
    a = rng.integers(0, 1 << 64, size=N, dtype=np.uint64)
    b = rng.integers(0, 1 << 64, size=N, dtype=np.uint64)
    c = rng.integers(0, 1 << 32, size=N, dtype=np.uint64)
    d = rng.integers(0, 1 << 32, size=N, dtype=np.uint64)
    # pos / len: small (inside and past the msb) and anywhere in 0..255
    small_c, small_d = rng.integers(0, 72, size=N), rng.integers(0, 72, size=N)
    c[: N // 2], d[: N // 2] = small_c[: N // 2], small_d[: N // 2]
    c[N // 2:], d[N // 2:] = c[N // 2:] & 0xFF, d[N // 2:] & 0xFF
    d[:16] = 0
    if high:  # the same pos / len with random bits above the low 8
        c |= rng.integers(1, 1 << 24, size=N, dtype=np.uint64) << np.uint64(8)
        d |= rng.integers(1, 1 << 24, size=N, dtype=np.uint64) << np.uint64(8)
    return a, b, c, d


def _dev(torch: Any, np: Any, arr: Any, bits: int) -> Any:
    if bits == 64:
        return torch.from_numpy(arr.view(np.int64).copy()).cuda()
    return torch.from_numpy(arr.astype(np.uint32).view(np.int32).copy()).cuda()


@pytest.mark.parametrize("op", OPS)
def test_bit_op_matches_the_isa(torch: Any, op: str) -> None:
    _check(torch, op, high=False)


#: Where the GPU disagrees with the document (seen on an H200, driver 580.159.04; sm_90 has
#: no single instruction for the 64-bit forms, ptxas expands them): with bits above the
#: low 8 of pos / len set,
#: bfe.u64 / bfe.s64 / bfi.b64 use the whole register (e.g. bfe.u64 a=0x94723f2bec5e7a96,
#: pos=0x66c8dc36, len=0x22343f24 gives 0, the document's pos 0x36 / len 0x24 0x251). The
#: 32-bit forms follow the document. Strict: the day the GPU follows the document, this
#: fails and the mark goes.
GPU_DEVIATIONS = {
    op: pytest.mark.xfail(strict=True, reason="the GPU reads pos / len beyond their low 8 bits")
    for op in ("bfe.u64", "bfe.s64", "bfi.b64")
}


@pytest.mark.parametrize("op", [pytest.param(o, marks=GPU_DEVIATIONS.get(o, ()))
                                for o in OPS if o.startswith(("bfe", "bfi"))])
def test_bfe_bfi_read_only_the_low_8_bits_of_pos_and_len(torch: Any, op: str) -> None:
    """The document: "pos = b & 0xff; len = c & 0xff" (bfe; bfi: c and d): random bits
    above the low 8 must not change the result."""
    _check(torch, op, high=True)


def _check(torch: Any, op: str, high: bool) -> None:
    import numpy as np

    from gpu.runtime import check_cuda

    lib = _lib()
    assert lib.bits_ops() == len(OPS)
    a, b, c, d = _inputs(np, op, high)
    ta, tb, tc, td = (_dev(torch, np, a, 64), _dev(torch, np, b, 64), _dev(torch, np, c, 32),
                      _dev(torch, np, d, 32))
    out = torch.empty(N, dtype=torch.int64, device="cuda")
    check_cuda(lib, lib.bits_run(OPS.index(op), N, ta.data_ptr(), tb.data_ptr(), tc.data_ptr(),
                                 td.data_ptr(), out.data_ptr()))
    got = out.cpu().numpy().view(np.uint64)
    errors = []
    for i in range(N):
        ai, bi, ci, di = int(a[i]), int(b[i]), int(c[i]), int(d[i])
        if op.startswith("prmt"):
            exp = _prmt(op, ai & M32, bi & M32, ci)
        elif op.startswith("bfe"):
            typ = op.split(".")[1]
            exp = _bfe(typ, ai & (M32 if typ.endswith("32") else M64), ci, di)
        else:
            typ = op.split(".")[1]
            m = M32 if typ == "b32" else M64
            exp = _bfi(typ, ai & m, bi & m, ci, di)
        if int(got[i]) != exp:
            errors.append(f"a={ai:#x} b={bi:#x} c={ci:#x} d={di:#x}: got {int(got[i]):#x}, "
                          f"expected {exp:#x}")
    assert not errors, f"{op}: {len(errors)} of {N} wrong, e.g. {errors[:5]}"


def test_lop3_every_truth_table(torch: Any) -> None:
    import numpy as np

    from gpu.runtime import check_cuda

    lib = _lib()
    n = 512
    a, b, c, _ = _inputs(np, "lop3")
    a, b, c = a[:n], b[:n], c[:n]
    out = torch.empty(n * 256, dtype=torch.int32, device="cuda")
    ta, tb, tc = _dev(torch, np, a, 64), _dev(torch, np, b, 64), _dev(torch, np, c, 32)
    check_cuda(lib, lib.lop3_run(n, ta.data_ptr(), tb.data_ptr(), tc.data_ptr(), out.data_ptr()))
    got = out.cpu().numpy().view(np.uint32).reshape(n, 256)
    a32, b32, c32 = (x.astype(np.uint32) for x in (a & M32, b & M32, c))
    full = np.uint32(M32)
    wrong = []
    for lut in range(256):
        exp = np.zeros(n, dtype=np.uint32)
        for i in range(8):
            if (lut >> i) & 1:
                exp |= ((a32 if i & 4 else a32 ^ full) & (b32 if i & 2 else b32 ^ full)
                        & (c32 if i & 1 else c32 ^ full))
        if not (got[:, lut] == exp).all():
            k = int(np.argmax(got[:, lut] != exp))
            wrong.append(f"lut {lut:#04x}: a={int(a32[k]):#x} b={int(b32[k]):#x} "
                         f"c={int(c32[k]):#x} got {int(got[k, lut]):#x} expected {int(exp[k]):#x}")
    assert not wrong, f"{len(wrong)} of 256 truth tables wrong, e.g. {wrong[:5]}"
