"""The shared pieces of the generated PTX wrappers (generated/include/ptxgen/ptx/target.hpp):

* the default PTXGEN_PTX_ISA_VERSION follows the compiling toolkit through the spec's
  CUDA-toolkit table (spec/targets.yaml ``cuda_toolkits``): nvcc's and NVRTC's own
  ``.version`` directive is the oracle for the toolkits installed here (nvcc 13.0 and
  13.5, NVRTC 13.0), the preprocessor
  (g++ with the toolkit macros set) for every row of the table;
* the generic address of a store (stmatrix) is a ``void*``, of a load (ldmatrix) a
  ``const void*``, as the spec's ``access`` says;
* fence_operand emits no instruction, for every register type and fragment.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import toolkits
from cpp import harness
from cpp.harness import INCLUDE, NVCC_FLAGS

from ptxgen.isa import ptx

TARGETS = ptx.instruction_set().targets
HEADER = "#include <ptxgen/ptx.hpp>\n"


def _code(version: str) -> int:
    major, minor = version.split(".")
    return int(major) * 10 + int(minor)


def _ptx_version(text: str) -> str:
    m = re.search(r"^\.version (\d+\.\d+)$", text, re.M)
    assert m, "no .version directive in the PTX"
    return m.group(1)


ISA_PROBE = HEADER + "__device__ int ptxgen_isa_version = PTXGEN_PTX_ISA_VERSION;\n"


def _probed(ptx_text: str) -> int:
    m = re.search(r"ptxgen_isa_version\S* = (\d+);", ptx_text)
    assert m, f"no ptxgen_isa_version in\n{ptx_text}"
    return int(m.group(1))


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_nvcc_default_is_the_version_nvcc_writes(tmp_path: Path, release: str) -> None:
    """nvcc 13.0 (PATH) and 13.5 (test dependency): 90 and 95, the .version they write."""
    nvcc = toolkits.require("nvcc", release)
    src = tmp_path / "isa.cu"
    src.write_text(ISA_PROBE)
    out = tmp_path / "isa.ptx"
    harness.run([nvcc, *NVCC_FLAGS, "-arch=sm_90a", "-ptx", str(src), "-o", str(out)])
    text = out.read_text()
    assert _probed(text) == _code(_ptx_version(text)) == {"13.0": 90, "13.5": 95}[release]
    # ... and the spec's table says the same for this toolkit.
    release = re.search(r"release (\d+\.\d+)", harness.run([nvcc, "--version"]).stdout)
    assert release
    table = dict(TARGETS.toolkits)
    assert table.get(release.group(1)) == _ptx_version(text), (
        f"spec/targets.yaml cuda_toolkits: CUDA {release.group(1)} -> "
        f"{table.get(release.group(1))}, nvcc writes {_ptx_version(text)}")


def test_nvrtc_writes_the_version_of_its_toolkit() -> None:
    """NVRTC defines the toolkit macros the header keys on; the table maps them to the
    ``.version`` NVRTC writes. (The wrappers themselves are nvcc-only: <cstdint>.)"""
    probe = "__device__ int ptxgen_isa_version = " \
            "__CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__;\n"
    ok, log, text = harness.nvrtc_compile(probe, "isa.cu", ["-arch=compute_90a", "-rdc=true"])
    assert ok, log
    cuda = _probed(text)
    toolkit = {int(c.split(".")[0]) * 100 + int(c.split(".")[1]): v for c, v in TARGETS.toolkits}
    assert toolkit.get(cuda) == _ptx_version(text), (cuda, _ptx_version(text))


def _preprocessed_default(cuda: str | None) -> int:
    defines = []
    if cuda is not None:
        major, minor = cuda.split(".")
        defines = [f"-D__CUDACC_VER_MAJOR__={major}", f"-D__CUDACC_VER_MINOR__={minor}"]
    proc = subprocess.run(
        ["g++", "-std=c++17", "-E", "-P", f"-I{INCLUDE}", *defines, "-x", "c++", "-"],
        input="#include <ptxgen/ptx/target.hpp>\nptxgen_isa_version = PTXGEN_PTX_ISA_VERSION\n",
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"ptxgen_isa_version = (\d+)", proc.stdout)
    assert m, proc.stdout[-2000:]
    return int(m.group(1))


def test_every_toolkit_of_the_table_selects_its_version() -> None:
    if not harness.has("g++"):
        harness.unavailable("g++")
    rows = list(TARGETS.toolkits)
    assert rows, "spec/targets.yaml has no cuda_toolkits table"
    newest = _code(TARGETS.newest)
    cases = [(cuda, min(_code(v), newest)) for cuda, v in rows]
    major, minor = rows[-1][0].split(".")
    cases.append((f"{major}.{int(minor) + 1}", min(_code(rows[-1][1]), newest)))  # newer
    major, minor = rows[0][0].split(".")
    older = f"{major}.{int(minor) - 1}" if int(minor) else f"{int(major) - 1}.8"
    cases.append((older, 0))  # older than the table: no gated form is assumed
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(_preprocessed_default, [c for c, _ in cases]))
    assert {c: g for (c, _), g in zip(cases, got, strict=True)} == dict(cases)
    # Without a CUDA compiler the newest version of the spec is assumed.
    assert _preprocessed_default(None) == newest


ACCESS = HEADER + r"""
#include <type_traits>
using namespace ptxgen::ptx;
using St = void (*)(void*, const std::uint32_t (&)[1]);
using Ld = void (*)(std::uint32_t (&)[1], const void*);
// (the array operands are deduced, so that a wrong array is a static_assert; the address
// of a specialization with them named is the signature)
static_assert(std::is_same_v<decltype(&stmatrix<stmatrix_shape::m8n8, stmatrix_num::x1,
                                                 stmatrix_type::b16, false, stmatrix_ss::none,
                                                 std::uint32_t, 1>), St>,
              "stmatrix writes through its generic address: void*");
static_assert(std::is_same_v<decltype(&ldmatrix<ldmatrix_shape::m8n8, ldmatrix_num::x1,
                                                 ldmatrix_type::b16, false, ldmatrix_ss::none,
                                                 std::uint32_t, 1>), Ld>,
              "ldmatrix reads through its generic address: const void*");
static_assert(std::is_same_v<ldmatrix_operands<ldmatrix_shape::m8n8, ldmatrix_num::x1,
                                               ldmatrix_type::b16>::d, std::uint32_t[1]>,
              "the array-operand trait");
__global__ void round_trip(unsigned short* p) {
    std::uint32_t r[1];
    ldmatrix<ldmatrix_shape::m8n8, ldmatrix_num::x1, ldmatrix_type::b16>(r, p);
    stmatrix<stmatrix_shape::m8n8, stmatrix_num::x1, stmatrix_type::b16>(p + 64, r);
}
"""


def test_generic_addresses_follow_the_memory_access(tmp_path: Path) -> None:
    nvcc = harness.tool("nvcc")
    src = tmp_path / "access.cu"
    src.write_text(ACCESS)
    harness.run([nvcc, *NVCC_FLAGS, harness.gencode("sm_90a"), "-ptx", str(src),
                 "-o", str(tmp_path / "access.ptx")])
    # A pointer to const memory is refused by the store.
    src.write_text(ACCESS + r"""
__global__ void store_to_const(const unsigned short* p) {
    std::uint32_t r[1] = {0};
    stmatrix<stmatrix_shape::m8n8, stmatrix_num::x1, stmatrix_type::b16>(p, r);
}
""")
    proc = harness.run([nvcc, *NVCC_FLAGS, harness.gencode("sm_90a"), "-ptx", str(src),
                        "-o", str(tmp_path / "bad.ptx")], ok=False)
    assert proc.returncode != 0
    log = proc.stdout + proc.stderr
    assert "no instance of function template \"ptxgen::ptx::stmatrix\"" in log, log
    assert "1 error detected" in log, log  # the const pointer, nothing else


FENCE = HEADER + r"""
using namespace ptxgen::ptx;
__global__ void fences(float* f, double* d, int* i, unsigned* u, unsigned long long* l) {
    float a = f[0]; double b = d[0]; std::int32_t c = i[0]; std::uint32_t e = u[0];
    std::uint64_t g = l[0]; float arr[3] = {f[1], f[2], f[3]};
#ifdef WITH_FENCE
    fence_operand(a); fence_operand(b); fence_operand(c); fence_operand(e); fence_operand(g);
    fence_operand(arr);
#endif
    f[4] = a + arr[0] + arr[1] + arr[2]; d[1] = b; i[1] = c; u[1] = e; l[1] = g;
}
__global__ void accumulate(float* out, std::uint64_t a, std::uint64_t b) {
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    wgmma_fence();
    wgmma_mma_async<8, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::f16,
                    wgmma_mma_async_btype::f16>(d, a, b, true, imm<1>, imm<1>, imm<0>, imm<0>);
    wgmma_commit_group();
    wgmma_wait_group(imm<0>);
#ifdef WITH_FENCE
    fence_operand(d);
#endif
    for (int k = 0; k < 4; ++k) out[threadIdx.x * 4 + k] = d[k];
}
"""

INSTR = re.compile(r"^\s+(?:@%p\d+\s+)?([a-z][\w.:]*)", re.M)


def _body(text: str, name: str) -> str:
    m = re.search(rf"\.entry \w*{name}\w*\(.*?\n\{{(.*?)\n\}}", text, flags=re.S)
    assert m, f"no kernel {name}"
    return m.group(1)


def test_fence_operand_emits_nothing(tmp_path: Path) -> None:
    """A compiler fence only: with or without it the kernels hold the same instructions
    (every register type, and a wgmma accumulator fragment through the array overload).
    Whether NVVM would have moved a use across wgmma.wait_group without it cannot be
    forced from a test: nvcc 13.0 happens to keep the order in these kernels either way."""
    nvcc = harness.tool("nvcc")
    src = tmp_path / "fence.cu"
    src.write_text(FENCE)
    texts = {}
    for flag in ([], ["-DWITH_FENCE"]):
        out = tmp_path / f"fence{len(flag)}.ptx"
        harness.run([nvcc, *NVCC_FLAGS, harness.gencode("sm_90a"), *flag, "-ptx", str(src),
                     "-o", str(out)])
        texts[bool(flag)] = out.read_text()
    for kernel in ("fences", "accumulate"):
        plain, fenced = (INSTR.findall(_body(texts[k], kernel)) for k in (False, True))
        assert fenced == plain, f"{kernel}: fence_operand must not emit instructions"
    assert "wgmma.wait_group.sync.aligned 0;" in _body(texts[True], "accumulate")


def test_fence_operand_parses_on_the_host() -> None:
    """Host compilers see the header too (nothing device-side is instantiated)."""
    if not harness.has("g++"):
        harness.unavailable("g++")
    src = "#include <ptxgen/ptx.hpp>\nint main() { float d[2] = {1, 2};" \
          " ptxgen::ptx::fence_operand(d); return static_cast<int>(d[0]) - 1; }\n"
    proc = subprocess.run(["g++", *harness.GXX_FLAGS, "-x", "c++", "-", "-o", "/dev/null"],
                          input=src, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
