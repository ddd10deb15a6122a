"""ld / st with memory orders and scopes, atom / red, and special registers on an H100
through the generated wrappers only (kernels/memory.cu: ptxgen/ptx/{ld_st,atom_red,
special_registers}.hpp), each against what the PTX ISA 9.4 says, checked on the host:

- special registers (10.x): %laneid is the thread's lane, %tid / %ctaid / %ntid / %nctaid
  the launch's, %smid below the SM count (torch) and below %nsmid and the same for every
  thread of a CTA, %cluster_ctarank / %cluster_nctarank the rank in a cluster of 2
  (__cluster_dims__(2,1,1)), %clock64 monotonic within a thread;
- a release / acquire handoff between two CTAs (64 pairs at once): st.release.gpu / .sys
  (or atom.exch.release.gpu) of a flag after plain st of 4,096 words and bar.sync; the
  other CTA's ld.acquire.gpu / .sys (or atom.or.acquire.gpu) sees the flag, bar.sync, and
  every ld.relaxed of the data must see the producer's values (the memory model's
  release / acquire pattern, 8.x);
- atom / red with every thread of a 16,384-thread grid on the same word: the final memory
  (add modulo 2^32 and 2^64, f32 add of small integers: exact, min / max signed, and / or /
  xor) and what each atom returned: atom.add's results chain (each result is the previous
  one plus its operand), atom.inc (bound 2^32-1) and the atom.cas loop return a
  permutation of 0 ... n-1, atom.exch returns every value but the last one stored; a
  shared-memory atom.add.cta per CTA read back by ld.shared.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from functools import cache
from typing import Any

import pytest

from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

BLOCKS, THREADS = 8, 96
PAIRS, WORDS = 64, 4096
ATOM_BLOCKS = 64


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("memory")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.special_words.restype = ctypes.c_int
    lib.special_run.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    lib.handoff_run.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int] + [ctypes.c_void_p] * 3
    lib.atomics_layout.argtypes = [ctypes.c_int]
    lib.atomics_run.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 4
    for f in (lib.special_run, lib.handoff_run, lib.atomics_layout, lib.atomics_run):
        f.restype = ctypes.c_int
    return lib


def test_special_registers(torch: Any) -> None:
    import numpy as np

    lib = _lib()
    k = lib.special_words()
    out = torch.zeros(BLOCKS * THREADS * k, dtype=torch.int64, device="cuda")
    check_cuda(lib, lib.special_run(BLOCKS, THREADS, out.data_ptr(), 64))
    got = out.cpu().numpy().view(np.uint64).reshape(BLOCKS, THREADS, k).astype(object)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    errors = []
    for b in range(BLOCKS):
        for t in range(THREADS):
            o = [int(x) for x in got[b, t]]
            want = {0: t % 32, 2: t, 3: b, 4: THREADS, 5: BLOCKS, 8: b % 2, 9: 2}
            for idx, w in want.items():
                if o[idx] != w:
                    errors.append(f"block {b} thread {t}: word {idx} = {o[idx]}, expected {w}")
            if not (o[6] < sms and o[6] < o[7]):
                errors.append(f"block {b} thread {t}: smid {o[6]}, nsmid {o[7]}, {sms} SMs")
            if o[6] != int(got[b, 0, 6]):
                errors.append(f"block {b}: threads on several SMs")
            if o[1] >= 64:
                errors.append(f"block {b} thread {t}: warpid {o[1]}")
            if not (0 < o[10] < 1 << 62) or o[11] != 1:
                errors.append(f"block {b} thread {t}: clock64 went back ({o[10]:#x}, {o[11]})")
    assert not errors, f"{len(errors)} wrong, e.g. {errors[:6]}"


@pytest.mark.parametrize("variant", ["st.release.gpu/ld.acquire.gpu",
                                     "st.release.sys/ld.acquire.sys",
                                     "atom.exch.release.gpu/atom.or.acquire.gpu"])
def test_release_acquire_handoff_between_two_ctas(torch: Any, variant: str) -> None:
    import numpy as np

    lib = _lib()
    v = ["st.release.gpu/ld.acquire.gpu", "st.release.sys/ld.acquire.sys",
         "atom.exch.release.gpu/atom.or.acquire.gpu"].index(variant)
    data = torch.zeros(PAIRS * WORDS, dtype=torch.int32, device="cuda")
    flags = torch.zeros(PAIRS, dtype=torch.int32, device="cuda")
    out = torch.zeros(PAIRS * WORDS, dtype=torch.int32, device="cuda")
    check_cuda(lib, lib.handoff_run(v, PAIRS, WORDS, data.data_ptr(), flags.data_ptr(),
                                    out.data_ptr()))
    got = out.cpu().numpy().view(np.uint32).reshape(PAIRS, WORDS)
    idx = np.arange(PAIRS * WORDS, dtype=np.uint64).reshape(PAIRS, WORDS)
    want = ((idx + 1) * np.uint64(0x9E3779B9) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    timed_out = int((got == 0xFFFFFFFF).all(axis=1).sum())
    assert timed_out == 0, f"{timed_out} of {PAIRS} consumers never saw the flag"
    bad = np.argwhere(got != want)
    assert len(bad) == 0, (f"{len(bad)} words read stale after the acquire, e.g. pair "
                           f"{bad[0][0]} word {bad[0][1]}: {got[tuple(bad[0])]:#x} != "
                           f"{want[tuple(bad[0])]:#x}")


def _chain(olds: list[int], vals: list[int], final: int, modulus: int) -> bool:
    """Every atom.add result but the first is another's result plus its operand."""
    return (Counter([(o + v) % modulus for o, v in zip(olds, vals, strict=True)]) + Counter([0])
            == Counter(olds) + Counter([final]))


def test_atom_and_red_results_and_final_memory(torch: Any) -> None:
    import numpy as np

    lib = _lib()
    n_mem, n_olds, n_cas = (lib.atomics_layout(i) for i in range(3))
    n = ATOM_BLOCKS * 256
    rng = np.random.default_rng(seed_for("atomics"))
    vals = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    words = np.zeros(2 * n_mem, dtype=np.uint32)
    words[14], words[16], words[18] = 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF
    mem = torch.from_numpy(words.view(np.int32).copy()).cuda()
    tv = torch.from_numpy(vals.view(np.int32).copy()).cuda()
    olds = torch.zeros(n_olds * n, dtype=torch.int64, device="cuda")
    sums = torch.zeros(ATOM_BLOCKS, dtype=torch.int32, device="cuda")
    check_cuda(lib, lib.atomics_run(ATOM_BLOCKS, mem.data_ptr(), tv.data_ptr(), olds.data_ptr(),
                                    sums.data_ptr()))
    w = [int(x) for x in mem.cpu().numpy().view(np.uint32)]
    o = olds.cpu().numpy().view(np.uint64).reshape(n_olds, n)
    o = [[int(x) for x in row] for row in o]
    v = [int(x) for x in vals]
    s32 = [x - (1 << 32) if x >= 1 << 31 else x for x in v]
    and_, or_, xor_ = 0xFFFFFFFF, 0, 0
    for x in v:
        and_ &= x | (x >> 3) | 0x10000
        or_ |= x & (x >> 5)
        xor_ ^= x
    m32 = 1 << 32
    final = {
        "atom.add.relaxed.gpu.u32": (w[0], sum(v) % m32),
        "atom.add.acq_rel.gpu.u64": (w[2] | w[3] << 32, sum(x << 16 for x in v) % (1 << 64)),
        "atom.inc.u32": (w[4], n),
        "atom.cas.acq_rel.gpu.b32 loop": (w[8], n_cas),
        "red.add.release.gpu.u32": (w[10], sum(v) % m32),
        "red.add.relaxed.gpu.f32": (w[12], int(np.float32(sum(x & 0xFF for x in v))
                                               .view(np.uint32))),
        "atom.min.relaxed.gpu.s32": (w[14], min(s32) % m32),
        "atom.max.relaxed.gpu.s32": (w[16], max(s32) % m32),
        "red.and.b32": (w[18], and_),
        "red.or.relaxed.sys.b32": (w[20], or_),
        "red.xor.relaxed.cta.b32": (w[22], xor_),
    }
    errors = [f"{k}: final {g:#x}, expected {e:#x}" for k, (g, e) in final.items() if g != e]
    if not _chain(o[0], v, w[0], m32):
        errors.append("atom.add.u32: the results do not chain")
    if not _chain(o[1], [x << 16 for x in v], w[2] | w[3] << 32, 1 << 64):
        errors.append("atom.add.u64: the results do not chain")
    if sorted(o[2]) != list(range(n)):
        errors.append("atom.inc: the results are not 0 ... n-1")
    if sorted(o[3] + [w[6]]) != list(range(n + 1)):
        errors.append("atom.exch.relaxed.sys: the results and the final value are not 0 ... n")
    if sorted(o[4][:n_cas]) != list(range(n_cas)):
        errors.append("atom.cas: the loop's results are not 0 ... n-1")
    got_sums = [int(x) for x in sums.cpu().numpy().view(np.uint32)]
    for b in range(ATOM_BLOCKS):
        blk = slice(b * 256, (b + 1) * 256)
        want = sum(v[blk]) % m32
        if got_sums[b] != want or not _chain(o[5][blk], v[blk], want, m32):
            errors.append(f"atom.add.relaxed.cta.shared.u32, CTA {b}: {got_sums[b]:#x} != {want:#x}"
                          " or the results do not chain")
    assert not errors, errors[:8]
