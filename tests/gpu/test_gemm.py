"""The wgmma GEMM of examples/wgmma_gemm on shapes other than the benchmark's: every element
written and equal to a float64 reference within bf16 rounding, with one and with several
tiles per CTA, both pipeline depths, and sizes it must refuse; and every kernel
configuration (clusters of 1 or 2, with and without the stream-K tail, whose cut tiles are
continued by another cluster) bit-identical to the single-CTA, whole-tile one.
(The 8192^3, 4096^3 and 8192 x 8192 x 2048 cases, timed, are examples/wgmma_gemm/bench.py.)"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpu.runtime import seed_for

pytestmark = pytest.mark.gpu

BENCH = Path(__file__).resolve().parents[2] / "examples" / "wgmma_gemm" / "bench.py"


@cache
def _lib() -> Any:
    spec = importlib.util.spec_from_file_location("wgmma_gemm_bench", BENCH)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    lib = ctypes.CDLL(str(bench.build()[0]))
    lib.ptxgen_gemm_bf16.restype = ctypes.c_int
    lib.ptxgen_gemm_bf16.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6
    lib.ptxgen_gemm_bf16_config.restype = ctypes.c_int
    lib.ptxgen_gemm_bf16_config.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 9
    return lib


@pytest.mark.parametrize(("m", "n", "k", "stages", "group_m", "grid"), [
    (128, 256, 64, 4, 16, 0),        # one tile, one k-block
    (1024, 2048, 512, 4, 16, 0),     # 64 tiles: fewer than the SMs
    (4096, 1536, 1024, 3, 8, 0),     # 192 tiles: several per CTA, 3 stages
    (2048, 4096, 2048, 4, 3, 7),     # 7 CTAs: many tiles each, a partial tile group
])
def test_gemm_matches_cublas(m: int, n: int, k: int, stages: int, group_m: int, grid: int,
                             torch: Any) -> None:
    lib = _lib()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed_for(f"gemm{m}x{n}x{k}"))
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
    err = lib.ptxgen_gemm_bf16(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, stages,
                               group_m, grid)
    assert err == 0, f"ptxgen_gemm_bf16 returned {err}"
    torch.cuda.synchronize()
    assert not torch.isnan(c).any(), "elements of C were not written"
    ref = a.double() @ b.double().t()
    rel = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    assert rel < 1e-2, f"relative error {rel:.3e}"
    worst = float(((c.double() - ref).abs() / (a.double().abs() @ b.double().abs().t())).max())
    assert worst < 2**-7, f"an element is off by {worst:.3e} of its scale"


@pytest.mark.parametrize(("m", "n", "k", "grid"), [
    (2048, 2048, 1024, 0),     # 64 tiles, 32 pairs: fewer units than SMs (no stream-K tail)
    (4096, 2560, 512, 0),      # 320 tiles / 160 pairs: tail cut over the SMs / clusters
    (2048, 4096, 2048, 14),    # 7 clusters, 128 pairs: 17 whole waves, a tail of 9
    (1024, 1024, 4096, 6),     # 64 k blocks a unit, 3 clusters: tail of 4 units cut in k
    (1024, 512, 64, 0),        # one k block: C stored directly, not through TMA
])
def test_gemm_configs_are_bit_identical(m: int, n: int, k: int, grid: int, torch: Any) -> None:
    lib = _lib()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed_for(f"gemm-configs{m}x{n}x{k}"))
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    outs = {}
    for cfg in itertools.product((1, 2), (0, 1), (0, 1)):  # cluster, streamk, tma_store
        c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
        err = lib.ptxgen_gemm_bf16_config(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k,
                                          4, 16, grid, *cfg)
        assert err == 0, f"(cluster, streamk, tma_store) {cfg}: returned {err}"
        torch.cuda.synchronize()
        assert not torch.isnan(c).any(), f"(cluster, streamk, tma_store) {cfg}: unwritten"
        outs[cfg] = c
    ref = a.double() @ b.double().t()
    rel = float(torch.linalg.norm(outs[(1, 0, 0)].double() - ref) / torch.linalg.norm(ref))
    assert rel < 1e-2, f"relative error {rel:.3e}"
    for cfg, c in outs.items():
        diff = int((c != outs[(1, 0, 0)]).sum().item())
        assert diff == 0, f"(cluster, streamk, tma_store) {cfg}: {diff} elements differ"


def test_gemm_refuses_other_sizes(torch: Any) -> None:
    lib = _lib()
    x = torch.empty(1, device="cuda")
    p = x.data_ptr()
    for m, n, k in ((100, 256, 64), (128, 200, 64), (128, 256, 96), (128, 256, 0)):
        assert lib.ptxgen_gemm_bf16(p, p, p, m, n, k, 4, 16, 0) == 3000
    assert lib.ptxgen_gemm_bf16(p, p, p, 128, 256, 64, 5, 16, 0) == 3001
    cfg = lib.ptxgen_gemm_bf16_config
    assert cfg(p, p, p, 128, 256, 64, 4, 16, 0, 2, 0, 0) == 3000  # M < 256 with cluster 2
    assert cfg(p, p, p, 256, 256, 64, 4, 16, 0, 3, 0, 0) == 3001
    assert cfg(p, p, p, 256, 256, 64, 4, 16, 0, 2, 2, 0) == 3001
    assert cfg(p, p, p, 256, 256, 64, 4, 16, 0, 2, 0, 2) == 3001
