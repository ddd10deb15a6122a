"""The FP8 GEMM (examples/wgmma_gemm/gemm.cu built with -DPTXGEN_GEMM_E4M3, benchmarked by
examples/fp8_gemm/bench.py) on shapes other than the benchmark's: e4m3 x e4m3 -> f32 ->
bf16 with per-tensor scales, every element written, within the ISA-derived tolerance of a
float64 product of the dequantized operands (examples/fp8_gemm/bench.py tolerance()) and no
further from it than twice torch._scaled_mm's error plus the bf16 rounding; every kernel
configuration (clusters of 1 or 2, the stream-K tail, TMA-store epilogue) bit-identical to
the single-CTA, whole-tile one; sizes it must refuse."""

from __future__ import annotations

import importlib.util
import itertools
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpu.runtime import seed_for

pytestmark = pytest.mark.gpu

BENCH = Path(__file__).resolve().parents[2] / "examples" / "fp8_gemm" / "bench.py"


@cache
def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("fp8_gemm_bench", BENCH)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@cache
def _lib() -> Any:
    bench = _bench()
    return bench.load(bench.build()[0])


def _check(torch: Any, c: Any, a8: Any, b8: Any, sa: Any, sb: Any, k: int) -> None:
    assert not torch.isnan(c).any(), "elements of C were not written"
    ref = (a8.double() * sa.double()) @ (b8.double() * sb.double()).t()
    rel = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    assert rel <= _bench().tolerance(k), f"relative error {rel:.3e}"
    theirs = torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    rel_theirs = float(torch.linalg.norm(theirs.double() - ref) / torch.linalg.norm(ref))
    assert rel <= 2 * rel_theirs + 2.0**-8, f"relative error {rel:.3e}, torch {rel_theirs:.3e}"


@pytest.mark.parametrize(("m", "n", "k", "grid"), [
    (128, 256, 128, 0),        # one tile, one k block
    (1024, 2048, 512, 0),      # 64 tiles: fewer than the SMs
    (4096, 1536, 1024, 0),     # 192 tiles: several per CTA
    (2048, 4096, 2048, 7),     # 7 CTAs: many tiles each, a partial tile group
])
def test_gemm_fp8_matches_reference(m: int, n: int, k: int, grid: int, torch: Any) -> None:
    lib = _lib()
    gen = torch.Generator(device=torch.device("cuda"))
    gen.manual_seed(seed_for(f"gemm-fp8-{m}x{n}x{k}"))
    a8, b8, sa, sb = _bench().operands(torch, m, n, k, gen)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    err = lib.ptxgen_gemm_e4m3(a8.data_ptr(), b8.data_ptr(), c.data_ptr(), sa.data_ptr(),
                               sb.data_ptr(), m, n, k, 4, 16, grid)
    assert err == 0, f"ptxgen_gemm_e4m3 returned {err}"
    torch.cuda.synchronize()
    _check(torch, c, a8, b8, sa, sb, k)


@pytest.mark.parametrize(("m", "n", "k", "grid"), [
    (4096, 2560, 512, 0),      # 320 tiles / 160 pairs: tail cut over the SMs / clusters
    (1024, 1024, 4096, 6),     # 32 k blocks a unit, 3 clusters: tail of 4 units cut in k
    (1024, 512, 128, 0),       # one k block: C stored directly, not through TMA
])
def test_gemm_fp8_configs_are_bit_identical(m: int, n: int, k: int, grid: int,
                                            torch: Any) -> None:
    lib = _lib()
    gen = torch.Generator(device=torch.device("cuda"))
    gen.manual_seed(seed_for(f"gemm-fp8-configs{m}x{n}x{k}"))
    a8, b8, sa, sb = _bench().operands(torch, m, n, k, gen)
    outs = {}
    for cfg in itertools.product((1, 2), (0, 1), (0, 1)):  # cluster, streamk, tma_store
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        err = lib.ptxgen_gemm_e4m3_config(a8.data_ptr(), b8.data_ptr(), c.data_ptr(),
                                          sa.data_ptr(), sb.data_ptr(), m, n, k, 4, 16, grid,
                                          *cfg)
        assert err == 0, f"(cluster, streamk, tma_store) {cfg}: returned {err}"
        torch.cuda.synchronize()
        outs[cfg] = c
    _check(torch, outs[(1, 0, 0)], a8, b8, sa, sb, k)
    for cfg, c in outs.items():
        diff = int((c != outs[(1, 0, 0)]).sum().item())
        assert diff == 0, f"(cluster, streamk, tma_store) {cfg}: {diff} elements differ"


def test_gemm_fp8_refuses_other_sizes(torch: Any) -> None:
    lib = _lib()
    p = torch.empty(1, device="cuda").data_ptr()
    for m, n, k in ((100, 256, 128), (128, 200, 128), (128, 256, 64), (128, 256, 0)):
        assert lib.ptxgen_gemm_e4m3(p, p, p, p, p, m, n, k, 4, 16, 0) == 3000
    assert lib.ptxgen_gemm_e4m3_config(p, p, p, p, p, 256, 256, 128, 3, 16, 0, 2, 0, 1) == 3001
    assert lib.ptxgen_gemm_e4m3_config(p, p, p, p, p, 128, 256, 128, 4, 16, 0, 2, 0, 0) == 3000
