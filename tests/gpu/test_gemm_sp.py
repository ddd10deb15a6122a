"""The 2:4-sparse GEMM of examples/sparse_gemm on shapes other than the benchmark's square one:
every element written, equal to the dense GEMM of the decompressed A (torch.matmul, cuBLAS)
within bf16 rounding and to a float64 reference, with one and with several tiles per CTA,
both pipeline depths, a partial tile group, C following the metadata, and sizes it must
refuse; single CTAs first, then clusters of 2 and of 4 sharing B through TMA multicast, then
two stages per wgmma group (ptxgen_gemm_sp_bf16_config) with every cluster size built (a GPU
fault in a later kernel cannot take the earlier results with it).
(The 8192^3 case, timed, is examples/sparse_gemm/bench.py.)"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpu.runtime import seed_for

pytestmark = pytest.mark.gpu

BENCH = Path(__file__).resolve().parents[2] / "examples" / "sparse_gemm" / "bench.py"


@cache
def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("sparse_gemm_bench", BENCH)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@cache
def _lib() -> Any:
    return _bench().load()


SHAPES = [  # m, n, k, stages, group_m, grid
    (128, 256, 64, 5, 16, 0),        # one tile, one k-block
    (128, 256, 640, 4, 16, 0),       # one tile, the stage ring wraps around
    (256, 256, 640, 5, 16, 0),       # one tile pair
    (1024, 2048, 512, 5, 16, 0),     # 64 tiles: fewer than the SMs
    (4096, 1536, 1024, 4, 8, 0),     # 192 tiles: several per CTA, 4 stages
    (2048, 4096, 2048, 5, 3, 7),     # 7 CTAs (6 in clusters): many tiles each, partial groups
]


def _check(torch: Any, m: int, n: int, k: int, stages: int, group_m: int, grid: int,
           cluster: int, group_stages: int = 1) -> None:
    bench, lib = _bench(), _lib()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed_for(f"gemm_sp{m}x{n}x{k}/{cluster}"))
    a, a_c, e = bench.sparse_operand(torch, m, k, gen)
    assert int((a != 0).reshape(m, k // 4, 4).sum(-1).max()) <= 2, "A is not 2:4 sparse"
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
    err = lib.ptxgen_gemm_sp_bf16_config(a_c.data_ptr(), e.data_ptr(), b.data_ptr(),
                                         c.data_ptr(), m, n, k, stages, group_m, grid, cluster,
                                         group_stages)
    assert err == 0, f"ptxgen_gemm_sp_bf16 returned {err}"
    torch.cuda.synchronize()
    assert not torch.isnan(c).any(), "elements of C were not written"
    ref = a.double() @ b.double().t()
    rel = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    assert rel < 1e-2, f"relative error {rel:.3e}"
    worst = float(((c.double() - ref).abs() / (a.double().abs() @ b.double().abs().t())).max())
    assert worst < 2**-7, f"an element is off by {worst:.3e} of its scale"
    dense = torch.matmul(a, b.t())
    diff = float(torch.linalg.norm(c.double() - dense.double()) / torch.linalg.norm(dense.double()))
    assert diff < 1e-2, f"relative difference from the dense GEMM {diff:.3e}"


@pytest.mark.parametrize(("m", "n", "k", "stages", "group_m", "grid"), SHAPES)
def test_gemm_sp_matches_dense(m: int, n: int, k: int, stages: int, group_m: int, grid: int,
                               torch: Any) -> None:
    _check(torch, m, n, k, stages, group_m, grid, 1)


def _metadata_matters(torch: Any, cluster: int, group_stages: int = 1) -> None:
    """The same A_c with the metadata of another pattern gives another (wrong) C."""
    bench, lib = _bench(), _lib()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed_for(f"gemm_sp_meta/{cluster}"))
    m, n, k = 512, 256, 256
    a, a_c, _ = bench.sparse_operand(torch, m, k, gen)
    _, _, e2 = bench.sparse_operand(torch, m, k, gen)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    c = torch.empty((m, n), device=dev, dtype=torch.bfloat16)
    ref = a.double() @ b.double().t()
    assert lib.ptxgen_gemm_sp_bf16_config(a_c.data_ptr(), e2.data_ptr(), b.data_ptr(),
                                          c.data_ptr(), m, n, k, 5, 16, 0, cluster,
                                          group_stages) == 0
    torch.cuda.synchronize()
    rel = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    assert rel > 0.5, f"C did not change with the metadata (relative error {rel:.3e})"


def test_gemm_sp_uses_the_metadata(torch: Any) -> None:
    _metadata_matters(torch, 1)


def test_gemm_sp_refuses_other_sizes(torch: Any) -> None:
    lib = _lib()
    x = torch.empty(1, device="cuda")
    p = x.data_ptr()
    for m, n, k in ((100, 256, 64), (128, 200, 64), (128, 256, 96), (128, 256, 0)):
        assert lib.ptxgen_gemm_sp_bf16(p, p, p, p, m, n, k, 5, 16, 0, 1) == 3000
    assert lib.ptxgen_gemm_sp_bf16(p, p, p, p, 128, 256, 64, 5, 16, 0, 2) == 3000  # M of 256
    assert lib.ptxgen_gemm_sp_bf16(p, p, p, p, 128, 256, 64, 3, 16, 0, 1) == 3001
    assert lib.ptxgen_gemm_sp_bf16(p, p, p, p, 256, 256, 64, 5, 16, 0, 3) == 3001
    assert lib.ptxgen_gemm_sp_bf16(p, p, p, p, 256, 256, 64, 5, 16, 0, 4) == 3000  # M of 512


# -- clusters of 2 (last) -------------------------------------------------------------------

@pytest.mark.parametrize(("m", "n", "k", "stages", "group_m", "grid"),
                         [s for s in SHAPES if s[0] % 256 == 0])
def test_gemm_sp_cluster2_matches_dense(m: int, n: int, k: int, stages: int, group_m: int,
                                        grid: int, torch: Any) -> None:
    _check(torch, m, n, k, stages, group_m, grid, 2)


def test_gemm_sp_cluster2_uses_the_metadata(torch: Any) -> None:
    _metadata_matters(torch, 2)


# -- clusters of 4 (B shared by 4 row blocks), and two stages per wgmma group ----------------

@pytest.mark.parametrize(("m", "n", "k", "stages", "group_m", "grid"),
                         [s for s in SHAPES if s[0] % 512 == 0 and s[3] == 5])
def test_gemm_sp_cluster4_matches_dense(m: int, n: int, k: int, stages: int, group_m: int,
                                        grid: int, torch: Any) -> None:
    _check(torch, m, n, k, stages, group_m, grid, 4)


#: (cluster, stages) of the kernels built with two stages per group.
GROUPED = [(1, 5), (2, 4), (2, 5), (4, 5)]


@pytest.mark.parametrize(("m", "n", "k", "group_m", "grid", "cluster", "stages"), [
    (s[0], s[1], s[2], s[4], s[5], cluster, stages) for s in SHAPES for cluster, stages in GROUPED
    if s[2] % 128 == 0 and s[0] % (128 * cluster) == 0])
def test_gemm_sp_two_stages_a_group_match_dense(m: int, n: int, k: int, group_m: int, grid: int,
                                                cluster: int, stages: int, torch: Any) -> None:
    _check(torch, m, n, k, stages, group_m, grid, cluster, 2)


def test_gemm_sp_two_stages_a_group_use_the_metadata(torch: Any) -> None:
    for cluster, _ in GROUPED:
        _metadata_matters(torch, cluster, 2)


def test_gemm_sp_config_refuses(torch: Any) -> None:
    lib = _lib()
    p = torch.empty(1, device="cuda").data_ptr()
    cfg = lib.ptxgen_gemm_sp_bf16_config
    assert cfg(p, p, p, p, 256, 256, 192, 5, 16, 0, 2, 2) == 3000  # 3 k blocks, 2 a group
    assert cfg(p, p, p, p, 512, 256, 128, 5, 16, 0, 2, 3) == 3001
    assert cfg(p, p, p, p, 512, 256, 128, 4, 16, 0, 4, 2) == 3001  # not built
    assert cfg(p, p, p, p, 512, 256, 128, 4, 16, 0, 1, 2) == 3001  # not built
