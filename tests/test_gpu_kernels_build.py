"""The GPU test kernels (tests/gpu/kernels) and the GEMM examples are compiled by nvcc for
sm_90a in CI too, where no GPU runs them: a change to the generated wrappers that breaks
their callers (a parameter type, a template parameter, an operand ptxas refuses) fails
here, not first on the borrowed H100. The test libraries are built with NVVM's
optimisation off (tests/gpu/build.py CHECK_FLAGS; the front end, the asm and ptxas see the
same code) and device code only (-cubin: the host compiler and the link add nothing the
wrappers can break; the async library, whose register counts are checked, is built whole),
the sparse wgmma cases as one library of a covering sample of them
(forms.wgmma_sp_sample(); PTXGEN_FULL_MATRIX=1, benchmarks/full_matrices.py, builds every
library whole as for the GPU), the examples exactly as for the GPU (their spill check
needs it)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cpp import harness
from gpu import build

ROOT = Path(__file__).resolve().parents[1]
#: The whole matrix (benchmarks/full_matrices.py): every library as the GPU gets it.
FULL = os.environ.get("PTXGEN_FULL_MATRIX") == "1"
LIBS = build.LIBS if FULL else build.CHECK_LIBS


#: The GEMM examples, each built by its bench.py's build() (fp8_gemm: examples/wgmma_gemm/gemm.cu
#: with -DPTXGEN_GEMM_E4M3, the e4m3 kernels, four of them).
EXAMPLES = ("wgmma_gemm", "sparse_gemm", "fp8_gemm")


def test_async_kernels_take_every_instruction_from_ptxgen() -> None:
    """tests/gpu/kernels/async.cu (tests/gpu/test_async.py) holds no asm statement, as
    examples/ (tests/test_async_examples.py): each family under test is called through its
    generated wrapper."""
    src = (ROOT / "tests" / "gpu" / "kernels" / "async.cu").read_text()
    code = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", src), flags=re.S)
    assert not re.search(r"\b(asm|__asm__|__asm)\b", code)
    for call in ("cp_async_bulk_tensor_load<", "cp_async_bulk_tensor_load_im2col<",
                 "cp_async_bulk_tensor_load_multicast<", "cp_async_bulk_tensor_store<",
                 "cp_async_bulk_commit_group()", "cp_async_bulk_wait_group<",
                 "mbarrier_init<", "mbarrier_arrive_expect_tx<", "mbarrier_try_wait_parity<",
                 "mbarrier_test_wait<", "mbarrier_complete_tx<", "mbarrier_expect_tx<",
                 "mbarrier_pending_count(", "mbarrier_arrive_drop<", "fence_proxy<",
                 "fence_mbarrier_init()", "setmaxnreg<", "barrier_cluster_arrive<",
                 "cp_async<", "cp_async_src_size<", "cp_async_ignore_src<",
                 "cp_async_commit_group()", "cp_async_wait_group(", "cp_async_wait_all()",
                 "cp_async_mbarrier_arrive<", "cp_async_bulk<", "cp_async_bulk_to_global(",
                 "mapa<", "barrier_sync<"):
        assert "px::" + call in code, call


#: Issue 29's kernels and the wrappers each must call (no asm statement in any of them).
WRAPPER_KERNELS = {
    "cvt.cu": ("cvt_bf16x2_f32<", "cvt_f16x2_f32<", "cvt_e4m3x2_f32<", "cvt_e5m2x2_f32<",
               "cvt_e4m3x2_f16x2<", "cvt_e5m2x2_f16x2<", "cvt_f16x2_e4m3x2", "cvt_f16x2_e5m2x2"),
    "approx.cu": ("rcp_approx_f32(", "ex2_approx_f32(", "lg2_approx_f32(", "tanh_approx_f32(",
                  "tanh_approx_f16(", "tanh_approx_bf16x2(", "ex2_approx_f16(",
                  "ex2_approx_bf16x2("),
    "warp.cu": ("shfl_sync_up(", "shfl_sync_down(", "shfl_sync_bfly(", "shfl_sync_idx(",
                "vote_sync_all(", "vote_sync_any(", "vote_sync_uni(", "vote_sync_ballot(",
                "match_any_sync<", "match_all_sync<", "redux_sync<", "activemask()"),
    "bits.cu": ("prmt(", "prmt<", "lop3(", "bfe<", "bfi<"),
    "memory.cu": ("st<", "st_release<", "ld_acquire<", "ld_relaxed<", "ld<", "atom<",
                  "atom_exch<", "atom_cas<", "red<", "laneid()", "smid()", "nsmid()",
                  "cluster_ctarank()", "px::clock64()"),
    "st_async.cu": ("px::st_async<", "px::st_async_v<", "px::red_async<", "px::getctarank<",
                    "px::mapa<", "px::mbarrier_arrive_expect_tx<",
                    "px::mbarrier_try_wait_parity<"),
}


@pytest.mark.parametrize("kernel", sorted(WRAPPER_KERNELS))
def test_wrapper_kernels_take_every_instruction_from_ptxgen(kernel: str) -> None:
    """tests/gpu/kernels/{cvt,approx,warp,bits,memory,st_async}.cu hold no asm statement: each
    instruction under test is a generated wrapper's."""
    src = (ROOT / "tests" / "gpu" / "kernels" / kernel).read_text()
    code = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", src), flags=re.S)
    assert not re.search(r"\b(asm|__asm__|__asm)\b", code)
    for call in WRAPPER_KERNELS[kernel]:
        assert call in code, call


def _bench(name: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every library and example, built once into a fresh folder (no cache from an earlier
    run), two nvcc at a time (the builds are independent and single-threaded; nvcc 13.0
    is required, in CI too). {name: (library, log) or the exception its build raised}."""
    harness.tool("nvcc")
    if _BUILT:  # once per process (a module fixture set up again does not build again)
        return _BUILT
    out: dict[str, Any] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTXGEN_GPU_BUILD", str(tmp_path_factory.mktemp("gpu-build")))
        benches = {e: _bench(f"{e}_bench", ROOT / "examples" / e / "bench.py", mp)
                   for e in EXAMPLES}

        def one(name: str) -> tuple[str, Any]:
            try:
                if name in benches:
                    return name, benches[name].build()
                whole = FULL or name == "async"
                return name, (build.build(name, check=True, device_only=not whole), "")
            except BaseException as exc:  # reported by the test of that build
                return name, exc

        # the longest builds first (the sparse wgmma parts, then the examples)
        order = sorted([*LIBS, *EXAMPLES], key=lambda n: (not n.startswith("wgmma"), n))
        with ThreadPoolExecutor(max_workers=2) as pool:
            out = dict(pool.map(one, order))
    _BUILT.update(out)
    return out


_BUILT: dict[str, Any] = {}


def _built(builds: dict[str, Any], name: str) -> tuple[str, str]:
    got = builds[name]
    if isinstance(got, BaseException):
        raise got
    lib, log = got
    return str(lib), str(log)


def test_sparse_wgmma_sample_covers_the_cases() -> None:
    """CI's sample of the sparse wgmma cases has every (A source, types, .satfinite), every
    N and every case with negating immediates or N-major B of the whole set, and is small."""
    from gpu import forms

    cases = forms.wgmma_sp_cases()
    sample = [cases[i] for i in forms.wgmma_sp_sample()]
    for key in (lambda c: (c.a_src, c.dtype, c.atype, c.btype, c.satfinite), lambda c: c.n,
                lambda c: (c.scale_a, c.scale_b, c.trans_b, c.a_src)):
        assert {key(c) for c in sample} == {key(c) for c in cases}
    assert len(sample) < len(cases) // 8
    inc = forms.wgmma_sp_inc(None)
    assert inc.count("PTXGEN_WGMMA_SP_CASE(") == len(sample)


@pytest.mark.parametrize("name", LIBS)
def test_gpu_test_library_compiles(builds: dict[str, Any], name: str) -> None:
    lib, _ = _built(builds, name)
    assert Path(lib).is_file() and Path(lib).stat().st_size > 0
    if name == "async":  # ptxas -v: the setmaxnreg kernel can take what its consumers ask
        from gpu import test_async

        test_async.check_setmaxnreg_registers((Path(lib).parent / "build.log").read_text())


@pytest.mark.parametrize("example", EXAMPLES)
def test_gemm_example_compiles(builds: dict[str, Any], example: str) -> None:
    lib, log = _built(builds, example)
    assert Path(lib).is_file()
    assert not re.search(r"\b[1-9]\d* bytes (spill|stack)", log), log  # no local memory


def test_sparse_gemm_takes_every_instruction_from_ptxgen() -> None:
    """examples/sparse_gemm writes no asm (tests/test_async_examples.py checks all of
    examples/): the sparse wgmma, its fence / commit / wait and the descriptors come from
    ptxgen directly, the TMA / mbarrier / cluster / setmaxnreg forms through
    examples/common/async_shim.cuh, whose functions each call one generated wrapper."""
    src = (ROOT / "examples" / "sparse_gemm" / "gemm_sp.cu").read_text()
    code = re.sub(r"//[^\n]*", "", src)
    for name in ("wgmma_mma_async_sp<", "wgmma_fence()", "wgmma_commit_group()",
                 "wgmma_wait_group(", "ptxgen::WgmmaDesc"):
        assert name in code, name
    shim = re.sub(r"//[^\n]*", "", (ROOT / "examples" / "common" / "async_shim.cuh").read_text())
    functions = re.findall(r"__device__ __forceinline__ [\w:]+ (\w+)\(", shim)
    calls = re.findall(r"\bpx::(mbarrier_\w+|cp_async_\w+|fence_\w+|barrier_cluster_\w+|"
                       r"setmaxnreg|mapa|barrier_sync)(?=\s*[<(])", shim)
    assert "wgmma" not in shim
    # smem_u32 and cluster_ctarank are plain CUDA; every other function is one wrapper call
    assert len(calls) == len(functions) - 2, (calls, functions)


def test_dense_gemm_hand_written_ptx_is_in_the_shim_only() -> None:
    """examples/wgmma_gemm writes no asm itself either: TMA loads and stores, mbarriers,
    cluster barriers, named barriers and setmaxnreg come from the shim, the wgmma, its
    fence / commit / wait and the descriptors from ptxgen."""
    src = (ROOT / "examples" / "wgmma_gemm" / "gemm.cu").read_text()
    code = re.sub(r"//[^\n]*", "", src)
    assert not re.search(r"\basm\b", code)
    for name in ("wgmma_mma_async<", "wgmma_fence()", "wgmma_commit_group()",
                 "wgmma_wait_group(", "ptxgen::WgmmaDesc", "shim::"):
        assert name in code, name


def test_sparse_wgmma_forms_are_the_ptx_isas() -> None:
    """The sparse wgmma forms that tests/gpu/test_wgmma_sp.py runs (read from the generated
    header) are the PTX ISA's 528, each with A from a descriptor and from registers."""
    from gpu import forms

    got = forms.wgmma_sp_forms()
    assert len(got) == 1056
    for src in ("desc", "regs"):
        assert {c.form for c in got if c.a_src == src} == forms.SM90_WGMMA_SP_EXPECTED
