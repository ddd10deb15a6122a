"""ldmatrix and stmatrix on an H100 through ptxgen::ptx::ldmatrix / stmatrix: .m8n8 .b16,
.x1 / .x2 / .x4, with and without .trans, with a generic, a .shared and a .shared::cta
address (every ldmatrix / stmatrix form of the header that sm_90a supports).

Shared memory holds 64 rows ("slots") of 8 b16 elements with distinct random values; lane
l passes the address of a randomly chosen slot, so a lane whose address is ignored, used for
the wrong matrix or the wrong row shows up. Checked element by element against the
documented fragment layouts (PTX ISA 9.7.14.5.15-16): for matrix i, rows are the slots of
lanes 8i..8i+7; without .trans lane l's register i holds row l/4, columns 2(l%4) and
2(l%4)+1 (low half first); with .trans it holds column l/4, rows 2(l%4) and 2(l%4)+1.
The round trip (ldmatrix, then stmatrix into other slots) must reproduce the rows.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpu import forms
from gpu.runtime import check_cuda, seed_for

pytestmark = pytest.mark.gpu

SS = {"none": 0, "shared": 1, "shared_cta": 2}
LD = [f for f in forms.MATRIX_FORMS if f.op == "ldmatrix"]
ST = [f for f in forms.MATRIX_FORMS if f.op == "stmatrix"]


def test_header_offers_the_sm90_forms() -> None:
    offered = forms.matrix_header_forms()
    missing = [f.name for f in forms.MATRIX_FORMS if not offered.get(f.name)]
    assert not missing, f"not offered for sm_90a: {missing}"


def _setup(name: str, torch: Any) -> tuple[Any, ...]:
    import numpy as np

    rng = np.random.default_rng(seed_for(name))
    slots = rng.permutation(1 << 16)[: 64 * 8].astype(np.uint16).reshape(64, 8)
    perm = rng.permutation(64).astype(np.int32)
    rows, rows2 = perm[:32].copy(), perm[32:].copy()
    return np, rng, slots, rows, rows2


def _run(lib: Any, torch: Any, mode: int, f: forms.MatrixForm, slots: Any, rows: Any, rows2: Any,
         regs: Any) -> tuple[Any, Any]:
    import numpy as np

    dev = torch.device("cuda")
    t_in = torch.from_numpy(slots.view(np.int16).copy()).to(dev)
    t_rows = torch.from_numpy(rows).to(dev)
    t_rows2 = torch.from_numpy(rows2).to(dev)
    t_regs = torch.from_numpy(regs.view(np.int32).copy()).to(dev)
    t_out = torch.full((64, 8), -1, dtype=torch.int16, device=dev)
    err = lib.matrix_run(mode, f.num, int(f.trans), SS[f.ss], t_in.data_ptr(), t_rows.data_ptr(),
                         t_rows2.data_ptr(), t_regs.data_ptr(), t_out.data_ptr())
    check_cuda(lib, err)
    return (t_regs.cpu().numpy().view(np.uint32), t_out.cpu().numpy().view(np.uint16))


def _fragment(np: Any, mats: Any, trans: bool) -> Any:
    """[32][num] registers of the documented layout of matrices mats[num][8][8]."""
    num = mats.shape[0]
    regs = np.zeros((32, num), dtype=np.uint32)
    for lane in range(32):
        for i in range(num):
            if trans:
                lo, hi = mats[i, 2 * (lane % 4), lane // 4], mats[i, 2 * (lane % 4) + 1, lane // 4]
            else:
                lo, hi = mats[i, lane // 4, 2 * (lane % 4)], mats[i, lane // 4, 2 * (lane % 4) + 1]
            regs[lane, i] = int(lo) | (int(hi) << 16)
    return regs


@pytest.mark.parametrize("f", LD, ids=lambda f: f.name)
def test_ldmatrix(f: forms.MatrixForm, matrix_lib: Any, torch: Any) -> None:
    np, _, slots, rows, rows2 = _setup(f.name, torch)
    regs, out = _run(matrix_lib, torch, 0, f, slots, rows, rows2,
                     np.zeros((32, f.num), dtype=np.uint32))
    mats = np.stack([slots[rows[8 * i: 8 * i + 8]] for i in range(f.num)])
    want = _fragment(np, mats, f.trans)
    bad = np.argwhere(regs != want)
    assert bad.size == 0, (f"{len(bad)} registers wrong, first (lane, matrix): "
                           f"{[tuple(x) for x in bad[:6]]}: got "
                           f"{[hex(regs[tuple(x)]) for x in bad[:6]]}, want "
                           f"{[hex(want[tuple(x)]) for x in bad[:6]]}")
    assert (out == slots).all(), "ldmatrix changed shared memory"


@pytest.mark.parametrize("f", ST, ids=lambda f: f.name)
def test_stmatrix(f: forms.MatrixForm, matrix_lib: Any, torch: Any) -> None:
    np, rng, slots, rows, rows2 = _setup(f.name, torch)
    regs_in = rng.integers(0, 1 << 32, (32, f.num), dtype=np.uint64).astype(np.uint32)
    _, out = _run(matrix_lib, torch, 1, f, slots, rows, rows2, regs_in)
    want = slots.copy()
    for i in range(f.num):
        for r in range(8):
            for c in range(8):
                if f.trans:  # element (r, c) is half r % 2 of the register of lane 4c + r/2
                    reg = int(regs_in[4 * c + r // 2, i])
                    want[rows[8 * i + r], c] = (reg >> (16 * (r % 2))) & 0xFFFF
                else:  # element (r, c) is half c % 2 of the register of lane 4r + c/2
                    reg = int(regs_in[4 * r + c // 2, i])
                    want[rows[8 * i + r], c] = (reg >> (16 * (c % 2))) & 0xFFFF
    bad = np.argwhere(out != want)
    assert bad.size == 0, (f"{len(bad)} elements wrong, first (slot, column): "
                           f"{[tuple(x) for x in bad[:6]]}")


@pytest.mark.parametrize("f", LD, ids=lambda f: f.name.replace("ldmatrix", "roundtrip"))
def test_ldmatrix_stmatrix_round_trip(f: forms.MatrixForm, matrix_lib: Any, torch: Any) -> None:
    np, _, slots, rows, rows2 = _setup("roundtrip" + f.name, torch)
    _, out = _run(matrix_lib, torch, 2, f, slots, rows, rows2,
                  np.zeros((32, f.num), dtype=np.uint32))
    want = slots.copy()
    for i in range(f.num):
        want[rows2[8 * i: 8 * i + 8]] = slots[rows[8 * i: 8 * i + 8]]
    bad = np.argwhere(out != want)
    assert bad.size == 0, (f"{len(bad)} elements wrong, first (slot, column): "
                           f"{[tuple(x) for x in bad[:6]]}")
