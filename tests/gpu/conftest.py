"""GPU tests (marker ``gpu``): kernels built only on the generated headers, run on an
NVIDIA GPU with compute capability 9.0 (H100 / H200; sm_90a).

Where there is no such GPU (CI), every test here is skipped at setup, without importing
anything heavy at collection: the test modules import only the standard library, numpy
and tests/gpu/forms.py at module level. Run them through the device tool with
``bash scripts/run_gpu.sh`` (all of them and the GEMM benchmark, writing
docs/gpu-results.md), or ``python3 -m pytest -m gpu tests/gpu``.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import pytest


@cache
def gpu_skip_reason() -> str | None:
    """None when a GPU with compute capability 9.0 and nvcc are here, else why not."""
    try:
        import torch
    except ImportError:
        return "no GPU: PyTorch is not installed (the GPU tests run through the device tool)"
    if not torch.cuda.is_available():
        return "no NVIDIA GPU on this machine (the GPU tests run through the device tool)"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return f"needs a compute capability 9.0 GPU for sm_90a, found {major}.{minor}"
    from gpu import build

    try:
        build.nvcc()
    except build.BuildError as e:
        return str(e)
    return None


@pytest.fixture(scope="session", autouse=True)
def _require_gpu() -> None:
    reason = gpu_skip_reason()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def torch() -> Any:
    import torch as module

    return module


def _load(name: str) -> ctypes.CDLL:
    from gpu import build

    lib = ctypes.CDLL(str(build.build(name)))
    lib.ptxgen_gpu_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gpu_error_string.argtypes = [ctypes.c_int]
    return lib


@pytest.fixture(scope="session")
def mma_lib(torch: Any) -> ctypes.CDLL:
    lib = _load("mma_sync")
    lib.mma_count.restype = ctypes.c_int
    lib.mma_name.restype = ctypes.c_char_p
    lib.mma_name.argtypes = [ctypes.c_int]
    lib.mma_run.restype = ctypes.c_int
    lib.mma_run.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 4
    return lib


@pytest.fixture(scope="session")
def mma_sp_lib(torch: Any) -> ctypes.CDLL:
    lib = _load("mma_sp")
    lib.mma_sp_count.restype = ctypes.c_int
    lib.mma_sp_name.restype = ctypes.c_char_p
    lib.mma_sp_name.argtypes = [ctypes.c_int]
    lib.mma_sp_selectors.restype = ctypes.c_int
    lib.mma_sp_selectors.argtypes = [ctypes.c_int]
    lib.mma_sp_run.restype = ctypes.c_int
    lib.mma_sp_run.argtypes = ([ctypes.c_int] * 2 + [ctypes.c_void_p] * 4
                               + [ctypes.c_uint] * 2)
    return lib


@pytest.fixture(scope="session")
def matrix_lib(torch: Any) -> ctypes.CDLL:
    lib = _load("ldmatrix")
    lib.matrix_run.restype = ctypes.c_int
    lib.matrix_run.argtypes = [ctypes.c_int] * 4 + [ctypes.c_void_p] * 5
    return lib


@pytest.fixture(scope="session")
def wgmma_lib(torch: Any) -> ctypes.CDLL:
    lib = _load("wgmma")
    lib.wgmma_count.restype = ctypes.c_int
    lib.wgmma_name.restype = ctypes.c_char_p
    lib.wgmma_name.argtypes = [ctypes.c_int]
    lib.wgmma_run.restype = ctypes.c_int
    lib.wgmma_run.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 6 + [ctypes.c_int] * 3
    return lib


@pytest.fixture(scope="session")
def wgmma_sp_libs(torch: Any) -> dict[int, ctypes.CDLL]:
    """The libraries of the sparse wgmma cases, by part (loaded on first use)."""
    from gpu import build

    class Libs(dict[int, ctypes.CDLL]):
        def __missing__(self, part: int) -> ctypes.CDLL:
            lib = _load(build.WGMMA_SP_LIBS[part])
            lib.wgmma_sp_count.restype = ctypes.c_int
            lib.wgmma_sp_index.restype = ctypes.c_int
            lib.wgmma_sp_index.argtypes = [ctypes.c_int]
            lib.wgmma_sp_name.restype = ctypes.c_char_p
            lib.wgmma_sp_name.argtypes = [ctypes.c_int]
            lib.wgmma_sp_selectors.restype = ctypes.c_int
            lib.wgmma_sp_selectors.argtypes = [ctypes.c_int]
            lib.wgmma_sp_run.restype = ctypes.c_int
            lib.wgmma_sp_run.argtypes = ([ctypes.c_int] * 2 + [ctypes.c_void_p] * 7
                                         + [ctypes.c_int] * 3)
            self[part] = lib
            return lib

    return Libs()


@pytest.fixture(scope="session")
def async_lib(torch: Any) -> ctypes.CDLL:
    lib = _load("async")
    ptr, i, u = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
    for name, args in {
        "async_tma_tile": [i, i, i] + [ptr] * 6,
        "async_tma_im2col": [i] + [ptr] * 5 + [u, u] + [ptr] * 3,
        "async_tma_multicast": [ptr] + [i] * 6 + [ptr],
        "async_bulk_copy": [ptr, ptr, i, i],
        "async_mbarrier_sequence": [ptr],
        "async_mbarrier_phases": [i, ptr, ptr],
        "async_setmaxnreg_pipeline": [ptr, i, ptr],
        "async_cp_async": [i] * 5 + [ptr, ptr, i],
        "async_cluster_address": [ptr],
    }.items():
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = args
    return lib


def pytest_report_header() -> str:
    from gpu.runtime import SEED

    return f"ptxgen GPU tests: PTXGEN_GPU_SEED={SEED}"
