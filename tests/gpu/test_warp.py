"""Warp collectives on an H100 through the generated wrappers of ptxgen/ptx/warp.hpp only
(kernels/warp.cu): shfl.sync (up / down / bfly / idx), vote.sync (all / any / uni /
ballot), match.sync (any / all on b32 and b64), redux.sync (add / min / max on u32 and s32;
and / or / xor on b32) and activemask.

Each warp runs with its own membermask, only its threads in the mask executing the
instruction; the others must write nothing (their entries keep the host's poison). The
oracle is the PTX ISA 9.4's description, computed on the host: shfl.sync's pseudocode
(9.7.10.6: segmask from c[12:8], clamp from c[4:0], the own lane's value where the source
lane is out of range), run with the full mask and every segment width 32 ... 1; vote.sync
(9.7.15.10), match.sync (9.7.15.11: any: the lanes of the mask holding the same value; all:
the mask when every lane holds the same value, else 0), redux.sync (9.7.15.13: add modulo
2^32, min / max as unsigned or signed, the bitwise ops) over the lanes of the mask. The
masks: all 32 lanes, halves, alternating lanes, single lanes and random masks; the values:
random, and from a small set so that matches and uniform votes happen.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest

from gpu.runtime import seed_for

pytestmark = pytest.mark.gpu

POISON = 0xDEADBEEF
OPS = ("shfl.sync.up", "shfl.sync.down", "shfl.sync.bfly", "shfl.sync.idx",
       "vote.sync.all", "vote.sync.any", "vote.sync.uni", "vote.sync.ballot",
       "match.any.sync.b32", "match.any.sync.b64", "match.all.sync.b32", "match.all.sync.b64",
       "redux.sync.add.u32", "redux.sync.min.u32", "redux.sync.max.u32",
       "redux.sync.add.s32", "redux.sync.min.s32", "redux.sync.max.s32",
       "redux.sync.and.b32", "redux.sync.or.b32", "redux.sync.xor.b32", "activemask")
WARPS = 256


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("warp")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.warp_ops.restype = ctypes.c_int
    lib.warp_run.restype = ctypes.c_int
    lib.warp_run.argtypes = [ctypes.c_int, ctypes.c_int] + [ctypes.c_void_p] * 5
    return lib


def _inputs(op: str, np: Any) -> tuple[Any, Any, Any, Any]:
    rng = np.random.default_rng(seed_for(op))
    if op.startswith("shfl"):
        masks = np.full(WARPS, 0xFFFFFFFF, dtype=np.uint64)
        seg = np.array([0x00, 0x10, 0x18, 0x1C, 0x1E, 0x1F])[np.arange(WARPS) % 6]
        clamp = 0 if op.endswith("up") else 0x1F
        c = (seg << 8) | clamp
        b = rng.integers(0, 32, size=(WARPS, 32))
        b[: WARPS // 2] = rng.integers(0, 4, size=(WARPS // 2, 32))  # small offsets too
        b[::7] = b[::7, :1]  # one offset for the whole warp, as usual
    else:
        fixed = [0xFFFFFFFF, 0x0000FFFF, 0xFFFF0000, 0x55555555, 0xAAAAAAAA, 0x80000001,
                 *(1 << lane for lane in range(0, 32, 3))]
        rand = rng.integers(1, 1 << 32, size=WARPS - len(fixed), dtype=np.uint64).tolist()
        masks = np.array(fixed + rand, dtype=np.uint64)
        c = np.zeros(WARPS, dtype=np.uint64)
        b = rng.integers(0, 1 << 32, size=(WARPS, 32), dtype=np.uint64)
    a = rng.integers(0, 1 << 32, size=(WARPS, 32), dtype=np.uint64)
    small = np.arange(WARPS) % 3 != 0  # values from a small set in two warps of three
    a[small] = rng.integers(0, 3, size=(int(small.sum()), 32))
    if op.startswith("match") and op.endswith("b64"):
        b[small] = rng.integers(0, 2, size=(int(small.sum()), 32))
    if op.startswith("vote"):
        a[np.arange(WARPS) % 5 == 0] = 1  # uniform warps
        a[np.arange(WARPS) % 5 == 1] = 0
    return masks, a, b, c


def _signed(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def _expected(op: str, mask: int, a: list[int], b: list[int], c: int) -> dict[int, int]:
    lanes = [lane for lane in range(32) if (mask >> lane) & 1]
    out: dict[int, int] = {}
    if op.startswith("shfl"):
        seg, cval = (c >> 8) & 0x1F, c & 0x1F
        for lane in lanes:
            bval = b[lane] & 0x1F
            max_lane = (lane & seg) | (cval & ~seg & 0x1F)
            min_lane = lane & seg
            mode = op.rsplit(".", 1)[1]
            if mode == "up":
                j = lane - bval
                p = j >= max_lane
            elif mode == "down":
                j = lane + bval
                p = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bval
                p = j <= max_lane
            else:
                j = min_lane | (bval & ~seg & 0x1F)
                p = j <= max_lane
            out[lane] = a[j if p else lane]
        return out
    preds = {lane: a[lane] & 1 for lane in lanes}
    vals: dict[int, int] = {lane: a[lane] for lane in lanes}
    if op.endswith("b64"):
        vals = {lane: (b[lane] << 32) | a[lane] for lane in lanes}
    for lane in lanes:
        if op == "vote.sync.all":
            r = int(all(preds.values()))
        elif op == "vote.sync.any":
            r = int(any(preds.values()))
        elif op == "vote.sync.uni":
            r = int(len(set(preds.values())) == 1)
        elif op == "vote.sync.ballot":
            r = sum(1 << k for k, p in preds.items() if p)
        elif op.startswith("match.any"):
            r = sum(1 << k for k, v in vals.items() if v == vals[lane])
        elif op.startswith("match.all"):
            r = mask if len(set(vals.values())) == 1 else 0
        elif op == "activemask":
            continue  # checked apart: a subset of the mask holding the lane
        else:
            kind, typ = op.split(".")[2:4]
            xs = [_signed(a[k]) if typ == "s32" else a[k] for k in lanes]
            if kind == "add":
                r = sum(xs)
            elif kind == "min":
                r = min(xs)
            elif kind == "max":
                r = max(xs)
            else:
                r = 0 if kind in ("or", "xor") else 0xFFFFFFFF
                for x in xs:
                    r = r | x if kind == "or" else (r ^ x if kind == "xor" else r & x)
        out[lane] = r & 0xFFFFFFFF
    return out


@pytest.mark.parametrize("op", OPS)
def test_warp_collective_matches_the_isa(torch: Any, op: str) -> None:
    import numpy as np

    from gpu.runtime import check_cuda

    lib = _lib()
    assert lib.warp_ops() == len(OPS)
    masks, a, b, c = _inputs(op, np)
    dev = torch.device("cuda")

    def t(arr: Any) -> Any:
        return torch.from_numpy(arr.astype(np.uint32).view(np.int32).reshape(-1).copy()).to(dev)

    out = torch.full((WARPS * 32,), int(np.uint32(POISON).view(np.int32)), dtype=torch.int32,
                     device=dev)
    tm, ta, tb, tc = t(masks), t(a), t(b), t(c)
    check_cuda(lib, lib.warp_run(OPS.index(op), WARPS, tm.data_ptr(), ta.data_ptr(),
                                 tb.data_ptr(), tc.data_ptr(), out.data_ptr()))
    got = out.cpu().numpy().view(np.uint32).reshape(WARPS, 32)
    errors = []
    for w in range(WARPS):
        mask = int(masks[w])
        row = [int(v) for v in got[w]]
        outside = [lane for lane in range(32) if not (mask >> lane) & 1]
        if any(row[lane] != POISON for lane in outside):
            errors.append(f"warp {w} mask {mask:#010x}: a lane outside the mask wrote")
        if op == "activemask":
            for lane in range(32):
                if (mask >> lane) & 1 and (not (row[lane] >> lane) & 1 or row[lane] & ~mask):
                    errors.append(f"warp {w} mask {mask:#010x} lane {lane}: {row[lane]:#010x}")
            continue
        exp = _expected(op, mask, [int(v) for v in a[w]], [int(v) for v in b[w]], int(c[w]))
        for lane, e in exp.items():
            if row[lane] != e:
                errors.append(f"warp {w} mask {mask:#010x} c {int(c[w]):#x} lane {lane}: "
                              f"got {row[lane]:#x}, expected {e:#x}")
    assert not errors, f"{op}: {len(errors)} wrong, e.g. {errors[:6]}"
