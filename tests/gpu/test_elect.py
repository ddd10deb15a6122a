"""elect.sync on an H100 through ptxgen::ptx::elect_sync_lane (`elect.sync d|p, membermask`)
and ptxgen::ptx::elect_sync (`elect.sync _|p, membermask`), kernels/elect.cu.

Each warp runs with its own membermask, only its threads in the mask executing the
instruction (the PTX ISA leaves a thread outside the mask undefined), four times over. The
oracle is the PTX ISA's description (9.7.15.15): exactly one thread of the mask is the
leader (predicate true), every thread of the mask receives the leader's lane id in d, and
the election is deterministic: the same leader for the same membermask every time (every
repeat, every warp given that mask, and the sink form `_|p` too). The masks: all 32 lanes,
every single lane, the two halves, alternating lanes, and random masks (seeded per run).
Threads outside the mask must write nothing (their entries keep the host's poison).
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest

from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

POISON = 0xDEADBEEF


@cache
def _lib() -> Any:
    from gpu import build

    lib = ctypes.CDLL(str(build.build("elect")))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    lib.elect_repeats.restype = ctypes.c_int
    lib.elect_run.restype = ctypes.c_int
    lib.elect_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    return lib


def _masks(np: Any) -> Any:
    rng = np.random.default_rng(seed_for("elect"))
    fixed = [0xFFFF_FFFF, 0x0000_FFFF, 0xFFFF_0000, 0x5555_5555, 0xAAAA_AAAA, 0x8000_0001,
             *(1 << lane for lane in range(32))]
    rand = [int(x) for x in rng.integers(1, 1 << 32, size=88, dtype=np.uint64)]
    masks = fixed + rand
    masks += masks[:8]  # the same masks again in other warps (and blocks)
    masks += [0xFFFF_FFFF] * (-len(masks) % 4)
    return np.array(masks, dtype=np.uint32)


def _run(torch: Any) -> tuple[Any, Any]:
    import numpy as np

    lib = _lib()
    masks = _masks(np)
    reps = lib.elect_repeats()
    dev = torch.device("cuda")
    t_masks = torch.from_numpy(masks.view(np.int32).copy()).to(dev)
    out = torch.full((len(masks) * reps * 32 * 3,), np.int32(np.uint32(POISON).view(np.int32)),
                     dtype=torch.int32, device=dev)
    check_cuda(lib, lib.elect_run(len(masks), t_masks.data_ptr(), out.data_ptr()))
    res = out.cpu().numpy().view(np.uint32).reshape(len(masks), reps, 32, 3)
    return masks, res


def test_elect_sync_elects_one_leader_of_the_mask(torch: Any) -> None:
    masks, res = _run(torch)
    leaders: dict[int, int] = {}
    for w, mask in enumerate(int(m) for m in masks):
        lanes = [lane for lane in range(32) if (mask >> lane) & 1]
        outside = [lane for lane in range(32) if not (mask >> lane) & 1]
        assert (res[w][:, outside, :] == POISON).all(), f"mask {mask:#010x}: a thread outside"
        for r, rep in enumerate(res[w]):
            where = f"mask {mask:#010x}, repeat {r}"
            flags = rep[lanes, 1]
            assert set(flags.tolist()) <= {0, 1} and flags.sum() == 1, f"{where}: {flags}"
            leader = lanes[int(flags.argmax())]
            assert (rep[lanes, 0] == leader).all(), f"{where}: d {rep[lanes, 0]} != {leader}"
            sink = rep[lanes, 2]
            assert sink.sum() == 1 and lanes[int(sink.argmax())] == leader, f"{where}: _|p"
            # deterministic: the same leader for the same mask, in every warp and repeat
            assert leaders.setdefault(mask, leader) == leader, f"{where}: another leader"
