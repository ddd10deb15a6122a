"""The GPU test kernels (tests/gpu/kernels) and the wgmma GEMM example are compiled by
nvcc for sm_90a in CI too, where no GPU runs them: a change to the generated wrappers
that breaks their callers (a parameter type, a template parameter) fails here, not
first on the borrowed H100."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from cpp import harness
from gpu import build

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", build.LIBS)
def test_gpu_test_library_compiles(name: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    harness.tool("nvcc")
    monkeypatch.setenv("PTXGEN_GPU_BUILD", str(tmp_path))
    lib = build.build(name)
    assert lib.is_file() and lib.stat().st_size > 0


def test_gemm_example_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    harness.tool("nvcc")
    monkeypatch.setenv("PTXGEN_GPU_BUILD", str(tmp_path))
    spec = importlib.util.spec_from_file_location(
        "wgmma_gemm_bench", ROOT / "examples" / "wgmma_gemm" / "bench.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "wgmma_gemm_bench", module)
    spec.loader.exec_module(module)
    lib, _ = module.build()
    assert Path(lib).is_file()
