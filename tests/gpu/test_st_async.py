"""st.async and red.async across a cluster of 2 CTAs on an H100 (issue 29), through the
generated wrappers only (kernels/st_async.cu: ptxgen/ptx/{st_red_async,getctarank,mbarrier,
sync,fence}.hpp), against a reference computed here from the PTX ISA 9.4's semantics
(9.7.10.12 st.async, 9.7.15.7 red.async, 9.7.15.16 mbarrier complete-tx):

- every thread of CTA r stores into CTA r^1's shared memory with st.async (.u32, .b64,
  .v4.f32 and .v2.f64 through .shared::cluster addresses from mapa, .u32 through generic
  addresses), each completing on CTA r^1's mbarrier: CTA r^1's barrier completes once the
  bytes it expected (mbarrier.arrive.expect_tx) have all landed, and its buffers then hold
  exactly what CTA r stored (both directions at once, in 4 clusters);
- every thread of CTA r reduces into CTA r^1's slots with red.async (.add/.min/.max .u32 and
  .s32, .inc/.dec .u32 with one bound, .and/.or/.xor .b32, .add.u64), completing on a second
  barrier: the slots hold the seed folded with the 64 operands (.inc: old >= b ? 0 : old+1,
  .dec: old == 0 || old > b ? b : old-1, in any order for one b), and the barrier completes
  with 4 bytes of complete-tx per 32-bit reduction and 8 per 64-bit one;
- getctarank of a remote .shared::cluster address is the other CTA's rank, of a generic
  address of the CTA's own shared memory its own.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest

from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

CLUSTERS = 4
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("st_async")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.st_async_layout.argtypes = [ctypes.c_int]
    lib.st_async_layout.restype = ctypes.c_int
    lib.st_async_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint,
                                 ctypes.c_void_p]
    lib.st_async_run.restype = ctypes.c_int
    return lib


def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def _f32_bits(v: float) -> int:
    import struct

    return int(struct.unpack("<I", struct.pack("<f", v))[0])


def _f64_bits(v: float) -> int:
    import struct

    return int(struct.unpack("<Q", struct.pack("<d", v))[0])


def _reductions(seed: list[int], ops: list[list[int]], bound: int) -> list[int]:
    """The 11 32-bit slots and the 64-bit one after the sender's 64 threads' red.async, each
    thread's operands ops[t] (columns 8-19 of its inputs)."""
    r = [x & M32 for x in seed[:11]] + [seed[11] & M64]
    for o in ops:
        r[0] = (r[0] + o[8]) & M32
        r[1] = (r[1] + o[9]) & M32
        r[2] = min(r[2], o[10] & M32)
        r[3] = max(r[3], o[11] & M32)
        r[4] = min(_s32(r[4]), _s32(o[12])) & M32
        r[5] = max(_s32(r[5]), _s32(o[13])) & M32
        r[6] = 0 if r[6] >= bound else r[6] + 1
        r[7] = bound if r[7] == 0 or r[7] > bound else r[7] - 1
        r[8] &= o[16] & M32
        r[9] |= o[17] & M32
        r[10] ^= o[18] & M32
        r[11] = (r[11] + o[19]) & M64
    return r


def test_st_async_and_red_async_across_a_cluster(torch: Any) -> None:
    import numpy as np

    lib = _lib()
    threads, cols, nout = (lib.st_async_layout(i) for i in range(3))
    ctas = 2 * CLUSTERS
    rng = np.random.default_rng(seed_for("st_async"))
    vals = rng.integers(0, 1 << 63, (ctas, threads, cols), dtype=np.int64).view(np.uint64)
    vals[:, :, 8:20] ^= rng.integers(0, 2, (ctas, threads, 12), dtype=np.uint64) << np.uint64(63)
    init = rng.integers(0, 1 << 63, (ctas, 12), dtype=np.int64).view(np.uint64)
    bound = 40  # 64 increments wrap past it; decrements wrap to it
    init[:, 6] = rng.integers(0, bound, ctas)
    init[:, 7] = rng.integers(0, bound, ctas)
    v_dev = torch.from_numpy(vals.view(np.int64).copy()).cuda()
    i_dev = torch.from_numpy(init.view(np.int64).copy()).cuda()
    out = torch.zeros(ctas * nout, dtype=torch.int64, device="cuda")
    check_cuda(lib, lib.st_async_run(CLUSTERS, v_dev.data_ptr(), i_dev.data_ptr(), bound,
                                     out.data_ptr()))
    got = out.cpu().numpy().view(np.uint64).reshape(ctas, nout)
    errors: list[str] = []

    def expect(cta: int, what: str, have: int, want: int) -> None:
        if have != want and len(errors) < 40:
            errors.append(f"CTA {cta}: {what} = {have:#x}, expected {want:#x}")

    for cta in range(ctas):
        rank, sender = cta % 2, cta ^ 1
        o = [int(x) for x in got[cta]]
        expect(cta, "store barrier completed", o[588], 1)
        expect(cta, "reduction barrier completed", o[589], 1)
        expect(cta, "getctarank(remote)", o[590], rank ^ 1)
        expect(cta, "getctarank(own generic)", o[591], rank)
        for t in range(threads):
            v = [int(x) for x in vals[sender, t]]
            expect(cta, f"u32[{t}]", o[t], v[0] & M32)
            expect(cta, f"b64[{t}]", o[64 + t], v[1])
            quads = [v[2] & 0xFFFFFF, (v[2] >> 32) & 0xFFFFFF, v[3] & 0xFFFFFF,
                     (v[3] >> 32) & 0xFFFFFF]
            for i, q in enumerate(quads):
                expect(cta, f"v4.f32[{t}][{i}]", o[128 + 4 * t + i], _f32_bits(float(q)))
            for i in range(2):
                expect(cta, f"v2.f64[{t}][{i}]", o[384 + 2 * t + i],
                       _f64_bits(float(v[4 + i] >> 11)))
            expect(cta, f"generic u32[{t}]", o[512 + t], v[6] & M32)
        ops = [[int(x) for x in vals[sender, t]] for t in range(threads)]
        want = _reductions([int(x) for x in init[cta]], ops, bound)
        names = ["add.u32", "add.s32", "min.u32", "max.u32", "min.s32", "max.s32", "inc.u32",
                 "dec.u32", "and.b32", "or.b32", "xor.b32", "add.u64"]
        for k, name in enumerate(names):
            expect(cta, f"red.async.{name}", o[576 + k], want[k])
    assert not errors, "\n".join(errors)
