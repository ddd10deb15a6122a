"""Issue 16, point 3: examples/tcgen05_gemm/gemm.cu, a bf16 GEMM on ptxgen's tcgen05 wrappers
and descriptors, builds for every tcgen05 target and its SASS holds the tensor-core MMA, the
Tensor Memory load and the TMA load.

No Blackwell GPU is available, so the proof is the compiler's: nvcc 13.0 builds device code
(-cubin) for sm_100a, sm_103a and sm_110a, nvcc 13.5 for sm_107a (which 13.0 does not know),
and nvdisasm 13.5 (test dependency nvidia-cuda-nvdisasm) disassembles each cubin. The SASS
mnemonics (UTCHMMA for tcgen05.mma .kind::f16, LDTM for tcgen05.ld, UTMALDG for
cp.async.bulk.tensor, UTCBAR for tcgen05.commit, UTCATOMSWS for tcgen05.alloc / dealloc)
were read off nvdisasm's output of one-instruction kernels (research for issue 16). The
example must hold no asm statement of its own, and the same source must fail to build for
sm_90a with ptxgen's unsupported-target error (the wrappers' gating, not a missing symbol).
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import toolkits

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tcgen05_gemm"
INCLUDE = ROOT / "generated" / "include"
BUILDS = [("13.0", "sm_100a"), ("13.0", "sm_103a"), ("13.0", "sm_110a"), ("13.5", "sm_107a")]
EXPECTED = {
    "tensor-core MMA (tcgen05.mma .kind::f16)": r"\bUTCHMMA\b",
    "Tensor Memory load (tcgen05.ld .32x32b.x32)": r"\bLDTM\.x32\b",
    "TMA load (cp.async.bulk.tensor.2d)": r"\bUTMALDG\.2D\b",
    "tcgen05.commit": r"\bUTCBAR\b",
    "tcgen05.alloc": r"\bUTCATOMSWS\.FIND_AND_SET\.ALIGN\b",
    "tcgen05.dealloc": r"\bUTCATOMSWS\.AND\b",
}


def _cubin(release: str, arch: str, out: Path) -> tuple[int, str]:
    nvcc = toolkits.require("nvcc", release)
    cubin = out / f"gemm_{arch}.cubin"
    proc = subprocess.run([nvcc, "-std=c++17", "-O3", f"-arch={arch}", "-cubin",
                           f"-I{INCLUDE}", str(EXAMPLE / "gemm.cu"), "-o", str(cubin)],
                          capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def sass(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("tcgen05_gemm")
    for release, _ in BUILDS:  # resolve (and fail or skip) before building
        toolkits.require("nvcc", release)
    nvdisasm = toolkits.require_nvdisasm()
    with ThreadPoolExecutor(max_workers=2) as pool:  # the machine is shared: two at a time
        results = list(pool.map(lambda b: _cubin(b[0], b[1], out), BUILDS))
    texts: dict[str, str] = {}
    for (release, arch), (rc, log) in zip(BUILDS, results, strict=True):
        assert rc == 0, f"nvcc {release} -arch={arch}:\n{log}"
        dis = subprocess.run([nvdisasm, "-c", str(out / f"gemm_{arch}.cubin")],
                             capture_output=True, text=True, check=True)
        texts[arch] = dis.stdout
    return texts


@pytest.mark.parametrize(("release", "arch"), BUILDS)
@pytest.mark.parametrize("what", sorted(EXPECTED))
def test_sass_holds_the_instruction(sass: dict[str, str], release: str, arch: str,
                                    what: str) -> None:
    assert re.search(EXPECTED[what], sass[arch]), f"{what} not in the SASS for {arch}"


def test_the_example_writes_no_asm() -> None:
    text = (EXAMPLE / "gemm.cu").read_text()
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    assert not re.search(r"\basm\b", code)
    for header in ("ptxgen/ptx/tcgen05_tmem.hpp", "ptxgen/ptx/tcgen05_mma.hpp",
                   "ptxgen/smem_desc.hpp", "ptxgen/instr_desc.hpp", "ptxgen/tmem_addr.hpp"):
        assert f"#include <{header}>" in text


def test_not_for_hopper(tmp_path: Path) -> None:
    rc, log = _cubin("13.0", "sm_90a", tmp_path)
    assert rc != 0
    assert "Unresolved extern function 'ptxgen_unsupported_target_tcgen05_" in log
