"""The asynchronous data-movement and synchronisation families on an H100 (issue 17, part 2),
each through the generated wrappers only (tests/gpu/kernels/async.cu holds no asm):

- TMA tile loads 1d-5d (destination .shared::cluster and .shared::cta) of int32 torch
  tensors with padded, non-dense strides, tensor maps from the driver's
  cuTensorMapEncodeTiled: element-exact against torch slicing, out-of-bound elements zero;
- TMA tile stores 1d-5d after ordinary shared-memory stores and fence.proxy.async (with
  cp.async.bulk.wait_group and .wait_group.read): the box lands at its coordinates, clipped at
  the tensor's bounds, and nothing else of the allocation changes;
- TMA im2col loads 3d-5d (cuTensorMapEncodeIm2col) against an im2col reference written from
  the CUDA driver API's description of the bounding box and the pixel traversal;
- a TMA load multicast to a cluster of 2 CTAs (each CTA loads one half and multicasts it):
  both CTAs hold the whole box; fence.mbarrier_init and barrier.cluster order the barriers;
  each CTA then completes the other's barrier by a remote arrive on its mapa address;
- cp.async.bulk (non-tensor) global -> shared on an mbarrier and shared -> global;
- mbarrier: phases and parities, tokens with test_wait / try_wait, transaction counts
  (expect_tx, arrive.expect_tx, complete_tx), pending counts of .noComplete tokens,
  arrive_drop, generic addresses, inval; and 128 threads over 8 phases exchanging data;
- setmaxnreg.dec / .inc in a warp-specialised 2-stage TMA pipeline (producer warpgroup,
  2 consumer warpgroups, full / empty barriers, a double-buffered TMA-store epilogue with
  cp.async.bulk.wait_group.read, named barriers and fence.proxy.async): the result, and
  ptxas's register count of the kernel (from the build log) leaving the consumers' increase
  satisfiable;
- cp.async (sm_80): .ca 4 / 8 / 16 bytes and .cg 16, .shared and .shared::cta, an L2 prefetch
  size, commit_group / wait_group / wait_all, src-size zero fill, ignore-src, and
  cp.async.mbarrier.arrive with and without .noinc.

The oracles are torch (slicing, the data written) and the PTX ISA's stated semantics of the
mbarrier operations.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any

import pytest

from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

SETMAXNREG_KERNEL = "setmaxnreg_pipeline_kernel"
PRODUCER_REGS, CONSUMER_REGS, PIPELINE_THREADS = 40, 232, 384


def _np() -> Any:
    import numpy as np

    return np


def _arr(values: Any, ctype: Any) -> Any:
    """A ctypes array of values (host memory the launcher reads)."""
    return (ctype * len(values))(*[int(v) for v in values])


def _padded(torch: Any, name: str, shape: tuple[int, ...], pad: int) -> tuple[Any, Any]:
    """(base, view): base an int32 CUDA tensor of random values whose innermost dimension is
    `pad` longer than view's, view = base[..., :shape[-1]] (strides not dense)."""
    np = _np()
    rng = np.random.default_rng(seed_for(name))
    full = (*shape[:-1], shape[-1] + pad)
    base = torch.from_numpy(rng.integers(-(1 << 30), 1 << 30, full, dtype=np.int32)).cuda()
    return base, base[..., : shape[-1]]


def _map_args(view: Any) -> tuple[Any, Any]:
    """The tensor map's dimensions (innermost first) and byte strides of dimensions 1.."""
    dims = list(reversed(view.shape))
    strides = [4 * s for s in reversed(view.stride())][1:]
    return _arr(dims, ctypes.c_ulonglong), _arr(strides or [0], ctypes.c_ulonglong)


def _box_ref(np: Any, host: Any, coords: list[int], box: list[int]) -> Any:
    """The box (outermost first) at coords (innermost first) of host, zero outside it."""
    out = np.zeros(tuple(reversed(box)), dtype=host.dtype)
    src, dst = [], []
    for d, (c, b) in enumerate(zip(reversed(coords), reversed(box), strict=True)):
        lo, hi = max(c, 0), min(c + b, host.shape[d])
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - c, hi - c))
    out[tuple(dst)] = host[tuple(src)]
    return out


# (shape outermost first, box innermost first, coordinates innermost first); boxes and
# strides are multiples of 16 bytes, as the driver requires.
TILE_CASES = {
    "1d": ((1000,), [256], [100]),
    "1d_oob": ((1000,), [256], [900]),
    "2d": ((50, 72), [16, 8], [8, 5]),
    "2d_oob": ((50, 72), [32, 16], [-12, 40]),
    "3d": ((6, 10, 24), [8, 4, 3], [12, 5, 2]),
    "4d": ((4, 5, 6, 16), [8, 3, 2, 2], [4, 2, 3, 1]),
    "4d_oob": ((4, 5, 6, 16), [8, 4, 4, 2], [12, -2, 3, 3]),
    "5d": ((3, 3, 4, 5, 8), [4, 2, 2, 2, 2], [4, 3, 2, 1, 1]),
}


@pytest.mark.parametrize("cta_dst", [0, 1], ids=["shared_cluster", "shared_cta"])
@pytest.mark.parametrize("case", list(TILE_CASES))
def test_tma_tile_load(case: str, cta_dst: int, async_lib: Any, torch: Any) -> None:
    np = _np()
    shape, box, coords = TILE_CASES[case]
    _, view = _padded(torch, f"tma_load{case}", shape, pad=4)
    dims, strides = _map_args(view)
    out = torch.full((int(np.prod(box)),), -7, dtype=torch.int32, device="cuda")
    err = async_lib.async_tma_tile(0, cta_dst, len(box), view.data_ptr(), dims, strides,
                                   _arr(box, ctypes.c_uint), _arr(coords, ctypes.c_int),
                                   out.data_ptr())
    check_cuda(async_lib, err)
    got = out.cpu().numpy().reshape(tuple(reversed(box)))
    want = _box_ref(np, view.cpu().numpy(), coords, box)
    bad = np.argwhere(got != want)
    assert bad.size == 0, (f"{len(bad)} of {got.size} elements wrong, first (outermost first): "
                           f"{[tuple(x) for x in bad[:6]]}")


# A store's box may reach past the end of a dimension (those elements are not written), but
# not start below 0: on the H100 every store with a negative coordinate stops the kernel with
# "an illegal instruction was encountered" (test_tma_tile_store_negative_coordinate_faults),
# where a load zero-fills. So the stores' out-of-bounds cases lie past the ends.
STORE_CASES = {k: v for k, v in TILE_CASES.items() if min(v[2]) >= 0} | {
    "2d_oob": ((50, 72), [32, 16], [60, 40]),
    "4d_oob": ((4, 5, 6, 16), [8, 4, 4, 2], [12, 3, 3, 3]),
}


@pytest.mark.parametrize("wait_read", [0, 1], ids=["wait_group", "wait_group_read"])
@pytest.mark.parametrize("case", list(STORE_CASES))
def test_tma_tile_store(case: str, wait_read: int, async_lib: Any, torch: Any) -> None:
    np = _np()
    shape, box, coords = STORE_CASES[case]
    base, view = _padded(torch, f"tma_store{case}", shape, pad=4)
    before = base.cpu().numpy()
    rng = np.random.default_rng(seed_for(f"tma_store_box{case}"))
    src = rng.integers(-(1 << 30), 1 << 30, int(np.prod(box)), dtype=np.int32)
    t_src = torch.from_numpy(src).cuda()
    dims, strides = _map_args(view)
    err = async_lib.async_tma_tile(1, wait_read, len(box), view.data_ptr(), dims, strides,
                                   _arr(box, ctypes.c_uint), _arr(coords, ctypes.c_int),
                                   t_src.data_ptr())
    check_cuda(async_lib, err)
    torch.cuda.synchronize()
    got = base.cpu().numpy()
    want = before.copy()
    boxed = src.reshape(tuple(reversed(box)))
    sl_dst, sl_src = [], []
    for d, (c, b) in enumerate(zip(reversed(coords), reversed(box), strict=True)):
        lo, hi = max(c, 0), min(c + b, shape[d])
        sl_dst.append(slice(lo, hi))
        sl_src.append(slice(lo - c, hi - c))
    want[tuple(sl_dst)] = boxed[tuple(sl_src)]  # the view's region only: padding unchanged
    bad = np.argwhere(got != want)
    assert bad.size == 0, (f"{len(bad)} elements of the allocation wrong, first "
                           f"(outermost first): {[tuple(x) for x in bad[:6]]}")


_NEGATIVE_STORE = """
import ctypes, sys
sys.path.insert(0, sys.argv[1])
import torch
from gpu import conftest, test_async as t
lib = conftest._load("async")
lib.async_tma_tile.restype = ctypes.c_int
lib.async_tma_tile.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 6
t.STORE_CASES["neg"] = ((50, 72), [32, 16], [int(sys.argv[2]), int(sys.argv[3])])
t.test_tma_tile_store("neg", 0, lib, torch)
"""


@pytest.mark.parametrize("coords", [(-16, 5), (8, -1)], ids=["inner", "outer"])
def test_tma_tile_store_negative_coordinate_faults(coords: tuple[int, int]) -> None:
    """What the wrappers cannot check (the coordinates are run-time values): a tile store
    whose box starts below 0 in any dimension faults on the H100, unlike a load. Run in a
    process of its own, as the fault ends the CUDA context."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _NEGATIVE_STORE, str(Path(__file__).parents[1]),
                        *map(str, coords)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "illegal instruction" in r.stdout + r.stderr, \
        (r.returncode, (r.stdout + r.stderr)[-800:])


def _im2col_ref(np: Any, host: Any, lower: list[int], upper: list[int], channels: int,
                pixels: int, coords: list[int], offsets: list[int], upper_base: int) -> Any:
    """im2col: pixels x channels. host is outermost first (N, [D, [H,]] W, C); lower / upper /
    offsets innermost first (W, H, D), coords innermost first (C, W, H, D, N). The bounding
    box of spatial dimension i spans [lower_i, dim_i - upper_base + upper_i] (the driver API
    takes the upper corner relative to the last index: upper_base 1); starting at the
    coordinates' pixel, pixels are taken W fastest, then H, D, N, each wrapping to the box's
    lower corner; pixel (w, h, d, n) reads channels c.. of (w + offset_w, ...), zero out of
    bounds."""
    spatial = len(lower)
    sdims = [host.shape[-2 - i] for i in range(spatial)]  # W, H, D
    batches = host.shape[0]
    lo = list(lower)
    hi = [sdims[i] - upper_base + upper[i] for i in range(spatial)]
    pos = list(coords[1: 1 + spatial])
    n = coords[-1]
    c0 = coords[0]
    out = np.zeros((pixels, channels), dtype=host.dtype)
    for p in range(pixels):
        if 0 <= n < batches:
            idx = [pos[i] + offsets[i] for i in range(spatial)]
            if all(0 <= idx[i] < sdims[i] for i in range(spatial)):
                sp = tuple(reversed(idx))  # outermost first: D, H, W
                for ch in range(channels):
                    if 0 <= c0 + ch < host.shape[-1]:
                        out[p, ch] = host[(n,) + sp + (c0 + ch,)]
        for i in range(spatial + 1):  # advance W, wrapping into H, D and N
            if i == spatial:
                n += 1
                break
            pos[i] += 1
            if pos[i] <= hi[i]:
                break
            pos[i] = lo[i]
    return out


# (shape N, [D, [H,]] W, C outermost first; lower, upper corners, innermost first; channels;
# pixels; coordinates C, W, [H, [D,]] N; offsets W, [H, [D]])
IM2COL_CASES = {
    "3d": ((3, 20, 16), [-1], [-1], 8, 32, [4, -1, 0], [1]),
    "4d": ((2, 7, 9, 16), [-1, -1], [-1, -1], 8, 64, [0, 3, 1, 0], [2, 0]),
    "4d_batch_wrap": ((3, 5, 6, 8), [0, 0], [-2, -2], 8, 24, [0, 1, 2, 0], [1, 2]),
    "5d": ((2, 4, 5, 6, 16), [-1, -1, 0], [-1, -1, -1], 16, 32, [0, 2, 1, 1, 0], [0, 1, 1]),
}


@pytest.mark.parametrize("case", list(IM2COL_CASES))
def test_tma_im2col_load(case: str, async_lib: Any, torch: Any) -> None:
    np = _np()
    shape, lower, upper, channels, pixels, coords, offsets = IM2COL_CASES[case]
    _, view = _padded(torch, f"im2col{case}", shape, pad=4)
    dims, strides = _map_args(view)
    rank = len(shape)
    out = torch.full((pixels * channels,), -7, dtype=torch.int32, device="cuda")
    err = async_lib.async_tma_im2col(rank, view.data_ptr(), dims, strides,
                                     _arr(lower, ctypes.c_int), _arr(upper, ctypes.c_int),
                                     channels, pixels, _arr(coords, ctypes.c_int),
                                     _arr(offsets, ctypes.c_int), out.data_ptr())
    check_cuda(async_lib, err)
    got = out.cpu().numpy().reshape(pixels, channels)
    host = view.cpu().numpy()
    want = _im2col_ref(np, host, lower, upper, channels, pixels, coords, offsets, 1)
    if not (got == want).all():
        other = _im2col_ref(np, host, lower, upper, channels, pixels, coords, offsets, 0)
        rows = sorted({int(x[0]) for x in np.argwhere(got != want)})
        alt = "matches" if (got == other).all() else "also differs"
        pytest.fail(f"pixels {rows[:12]} ({len(rows)} of {pixels}) differ from the reference; "
                    f"with the upper corner taken relative to the dimension's size instead of "
                    f"its last index the reference {alt}")


@pytest.mark.parametrize(("row0", "col0"), [(37, 16), (88, 40)], ids=["inside", "edge"])
def test_tma_multicast_cluster2(row0: int, col0: int, async_lib: Any, torch: Any) -> None:
    np = _np()
    rows, cols_total, half_rows, cols = 100, 64, 8, 32
    rng = np.random.default_rng(seed_for(f"multicast{row0}"))
    host = rng.integers(-(1 << 30), 1 << 30, (rows, cols_total), dtype=np.int32)
    t = torch.from_numpy(host).cuda()
    n = 2 * half_rows * cols
    out = torch.full((2 * n + 2,), -7, dtype=torch.int32, device="cuda")
    err = async_lib.async_tma_multicast(t.data_ptr(), rows, cols_total, row0, col0, half_rows,
                                        cols, out.data_ptr())
    check_cuda(async_lib, err)
    flat = out.cpu().numpy()
    got = flat[: 2 * n].reshape(2, 2 * half_rows, cols)
    want = _box_ref(np, host, [col0, row0], [cols, 2 * half_rows])
    for r in range(2):
        bad = np.argwhere(got[r] != want)
        assert bad.size == 0, (f"CTA {r}: {len(bad)} elements wrong, first (row, col): "
                               f"{[tuple(x) for x in bad[:6]]}")
    # each CTA's second barrier completed by the other CTA's arrival through mapa
    assert flat[2 * n:].tolist() == [1, 1]


def test_cluster_shared_address_in_a_descriptor(async_lib: Any, torch: Any) -> None:
    """A CTA's shared::cta address in a 2-CTA cluster carries the CTA's rank above bit 17,
    and the generated descriptors take it as the ISA's encode() does, (x & 0x3FFFF) >> 4
    (seed 004; spec/descriptors/wgmma_desc.yaml note wg-shared-address): the device's
    WgmmaDesc::encode() of it does not stop the thread, and gives the seed formula's word
    (tests/test_descriptor_shared_address.py checks the Python classes and the host C++ on
    such addresses)."""
    out = torch.zeros(6, dtype=torch.int32, device="cuda")
    err = async_lib.async_cluster_address(out.data_ptr())
    check_cuda(async_lib, err)
    got = [int(v) & 0xFFFFFFFF for v in out.cpu().tolist()]
    addrs = got[:2]
    assert addrs[1] > 0x3FFFF, f"rank 1's shared::cta address {addrs[1]:#x} has no high bits"
    assert addrs[0] & 0x3FFFF == addrs[1] & 0x3FFFF, [hex(a) for a in addrs]
    for rank, addr in enumerate(addrs):
        word = got[2 + 2 * rank] | got[3 + 2 * rank] << 32
        assert word == (addr & 0x3FFFF) >> 4, (rank, hex(addr), hex(word))


@pytest.mark.parametrize("chunk", [16, 256, 4096])
def test_bulk_copy(chunk: int, async_lib: Any, torch: Any) -> None:
    """cp.async.bulk global -> shared (complete_tx on an mbarrier, several copies in one
    phase) and shared -> global (bulk group): the bytes arrive unchanged."""
    np = _np()
    n = 8192
    rng = np.random.default_rng(seed_for(f"bulk{chunk}"))
    src = rng.integers(0, 256, n, dtype=np.uint8)
    t_src = torch.from_numpy(src).cuda()
    out = torch.full((n + 64,), 0xA5, dtype=torch.uint8, device="cuda")
    check_cuda(async_lib, async_lib.async_bulk_copy(t_src.data_ptr(), out.data_ptr(), n, chunk))
    got = out.cpu().numpy()
    bad = np.flatnonzero(got[:n] != src)
    assert bad.size == 0, f"{bad.size} bytes wrong, first offsets: {bad[:8].tolist()}"
    assert (got[n:] == 0xA5).all(), "bytes after the copy were written"


def test_mbarrier_semantics(async_lib: Any, torch: Any) -> None:
    out = torch.full((64,), 0xDEAD, dtype=torch.int32, device="cuda")
    check_cuda(async_lib, async_lib.async_mbarrier_sequence(out.data_ptr()))
    got = [int(x) for x in out.cpu().tolist()]
    # (a) 3 arrivals a phase, 4 phases: current parity incomplete, previous complete; a token
    # of 1 arrival not complete; after 2 more (one arrive with count 2) the token's phase, its
    # parity (test_wait and try_wait) complete and the new phase's parity not.
    phases = [0, 1, 0, 1, 1, 1, 1, 0] * 4
    # (b) transaction counts: arrive.expect_tx 64 waits for 48 + 16 complete_tx; expect_tx 32
    # then arrive still waits for complete_tx 32.
    tx = [0, 0, 1, 0, 0, 1]
    # (d) arrive_drop of 2 expected: the phase needs 1 more arrival, and the next phase 1
    drop = [0, 1, 1]
    # (e) generic-address forms on a re-initialised barrier
    generic = [0, 1]
    n = len(phases) + len(tx) + 4 + len(drop) + len(generic)
    assert got[n] == n, f"the kernel made {got[n]} observations, expected {n}"
    assert got[: len(phases)] == phases, f"phases / parities: {got[:len(phases)]}"
    k = len(phases)
    assert got[k: k + len(tx)] == tx, f"transaction counts: {got[k:k + len(tx)]}"
    k += len(tx)
    pending = tuple(got[k: k + 2])
    # (c) .noComplete arrivals of 1 then 2 of 5 expected: the tokens' pending counts, as the
    # state before each arrival (5, 4) or after it (4, 2); the phase then completes with 2
    assert pending in ((5, 4), (4, 2)), f"pending counts of the tokens: {pending}"
    assert got[k + 2: k + 4] == [0, 1], f"noComplete phase: {got[k + 2:k + 4]}"
    k += 4
    assert got[k: k + len(drop)] == drop, f"arrive_drop: {got[k:k + len(drop)]}"
    k += len(drop)
    assert got[k: k + len(generic)] == generic, f"generic addresses: {got[k:k + len(generic)]}"


def test_mbarrier_phases_128_threads(async_lib: Any, torch: Any) -> None:
    np = _np()
    phases = 8
    rng = np.random.default_rng(seed_for("mbarrier_phases"))
    host = rng.integers(-(1 << 30), 1 << 30, (phases, 128), dtype=np.int32)
    t_in = torch.from_numpy(host).cuda()
    out = torch.full((phases, 128), -7, dtype=torch.int32, device="cuda")
    check_cuda(async_lib, async_lib.async_mbarrier_phases(phases, t_in.data_ptr(),
                                                          out.data_ptr()))
    got = out.cpu().numpy()
    want = np.stack([np.roll(host[p], -(1 + p)) for p in range(phases)])
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} values wrong, first (phase, thread): {bad[:6].tolist()}"


def kernel_registers(log: str, kernel: str) -> int:
    """ptxas -v's register count of the entry function whose mangled name holds kernel."""
    m = re.search(r"Compiling entry function '[^']*" + re.escape(kernel) + r"[^']*'.*?"
                  r"Used (\d+) registers", log, re.S)
    assert m, f"no register count of {kernel} in the build log"
    return int(m.group(1))


def check_setmaxnreg_registers(log: str) -> int:
    """The setmaxnreg kernel's registers at launch, from ptxas: within the register file for
    384 threads, and enough that one warpgroup's decrease to 40 frees what two warpgroups'
    increase to 232 takes (otherwise setmaxnreg.inc would wait for registers forever)."""
    regs = kernel_registers(log, SETMAXNREG_KERNEL)
    assert regs * PIPELINE_THREADS <= 65536, regs
    assert 128 * PRODUCER_REGS + 256 * CONSUMER_REGS <= regs * PIPELINE_THREADS, regs
    return regs


def test_setmaxnreg_pipeline(async_lib: Any, torch: Any) -> None:
    from gpu import build

    np = _np()
    tiles = 12
    rng = np.random.default_rng(seed_for("setmaxnreg_pipeline"))
    host = rng.integers(-(1 << 20), 1 << 20, (tiles * 32, 32), dtype=np.int32)
    t_in = torch.from_numpy(host).cuda()
    out = torch.full((tiles * 32, 32), -7, dtype=torch.int32, device="cuda")
    check_cuda(async_lib, async_lib.async_setmaxnreg_pipeline(t_in.data_ptr(), tiles,
                                                              out.data_ptr()))
    got = out.cpu().numpy()
    want = 2 * host + np.repeat(np.arange(tiles, dtype=np.int32), 32)[:, None]
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} values wrong, first (row, col): {bad[:6].tolist()}"
    log = (Path(build.build("async")).parent / "build.log").read_text()
    check_setmaxnreg_registers(log)


CP_FORMS = [(4, 0), (8, 0), (16, 0), (16, 1)]  # (bytes, .cg)
CP_MODES = ["groups", "wait_all", "src_size", "ignore_src", "mbarrier_noinc", "mbarrier"]


@pytest.mark.parametrize("mode", range(len(CP_MODES)), ids=CP_MODES)
@pytest.mark.parametrize("cta", [0, 1], ids=["shared", "shared_cta"])
@pytest.mark.parametrize(("size", "cg"), CP_FORMS, ids=["ca4", "ca8", "ca16", "cg16"])
def test_cp_async(size: int, cg: int, cta: int, mode: int, async_lib: Any, torch: Any) -> None:
    np = _np()
    n, threads = 4096, 96
    rng = np.random.default_rng(seed_for(f"cp_async{size}{cg}{cta}{mode}"))
    src = rng.integers(0, 256, 2 * n, dtype=np.uint8)
    t_src = torch.from_numpy(src).cuda()
    out_len = 2 * n if mode == 0 else n
    out = torch.full((out_len,), 0xA5, dtype=torch.uint8, device="cuda")
    check_cuda(async_lib, async_lib.async_cp_async(mode, size, cg, cta, threads,
                                                   t_src.data_ptr(), out.data_ptr(), n))
    got = out.cpu().numpy()
    want = src[:out_len].copy()
    chunks = want[:n].reshape(n // size, size)
    if CP_MODES[mode] == "src_size":
        for i in range(n // size):
            chunks[i, i % (size + 1):] = 0
    elif CP_MODES[mode] == "ignore_src":
        chunks[::3] = 0
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} bytes wrong, first offsets: {bad[:8].tolist()}"
