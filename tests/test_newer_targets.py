"""Issue 13, part 1: headers that keep working on targets newer than the spec.

The oracle is nvcc 13.5 (the test dependency; tests/toolkits.py), which knows
sm_107, sm_107a and sm_107f. "Newer than the spec" is simulated with the spec as
it was before PTX ISA 9.1 (tests/fixtures/probe/spec-9.0: no sm_107, newest PTX
ISA 9.0), generated with today's generator:

* a form the spec gives to "sm_XY and later" (mma.sync bf16 m16n8k16: sm_80+)
  builds for every sm_107 target, including the a / f ones, whose generic
  compute_107 pass sees no feature macros (a whole build, -c);
* an arch-/family-specific form (tcgen05.mma) fails on sm_107a / sm_107f with the
  "newer than the spec" extern function that names the spec's PTX ISA and the
  way out, and on baseline sm_107 as unsupported;
* PTXGEN_PTX_ALLOW_NEWER_TARGETS lets it build, and the instruction is emitted.

With the real spec, which knows sm_107, tcgen05.mma builds there without the macro
(tests/test_instr_wrappers.py, nvcc 13.5 on every target).
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import toolkits

from ptxgen import pipeline

ROOT = Path(__file__).resolve().parent.parent
OLD_SPEC = ROOT / "tests" / "fixtures" / "probe" / "spec-9.0"

KERNEL = r"""
#include <ptxgen/ptx.hpp>
using namespace ptxgen::ptx;
extern "C" __global__ void k(const unsigned* in, float* out) {
    std::uint32_t a[4] = {in[0], in[1], in[2], in[3]};
    std::uint32_t b[2] = {in[4], in[5]};
    float c[4] = {}, d[4];
    mma_sync<mma_sync_shape::m16n8k16, mma_sync_alayout::row, mma_sync_blayout::col,
             mma_sync_dtype::f32, mma_sync_atype::bf16, mma_sync_btype::bf16,
             mma_sync_ctype::f32>(d, a, b, c);
    for (int i = 0; i < 4; ++i) out[i] = d[i];
#ifdef WITH_TCGEN05
    tcgen05_mma<1, tcgen05_mma_kind::f16>(in[6], static_cast<std::uint64_t>(in[7]),
                                          static_cast<std::uint64_t>(in[8]), in[9], in[10] != 0);
#endif
}
"""
NEWER = re.compile(r"Unresolved extern function '(ptxgen_target_newer_than_the_spec_ptx_isa_"
                   r"(\d+)_(\d+)_\w+PTXGEN_PTX_ALLOW_NEWER_TARGETS)'")


BUILDS = {
    # name: (arch, defines)
    "and-later sm_107": ("sm_107", ()),
    "and-later sm_107a": ("sm_107a", ()),
    "and-later sm_107f": ("sm_107f", ()),
    "specific sm_107a": ("sm_107a", ("WITH_TCGEN05",)),
    "specific sm_107f": ("sm_107f", ("WITH_TCGEN05",)),
    "specific sm_107": ("sm_107", ("WITH_TCGEN05",)),
    "opt-in sm_107a": ("sm_107a", ("WITH_TCGEN05", "PTXGEN_PTX_ALLOW_NEWER_TARGETS")),
    "opt-in sm_107f": ("sm_107f", ("WITH_TCGEN05", "PTXGEN_PTX_ALLOW_NEWER_TARGETS")),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    """Every build of BUILDS against headers generated from the spec before PTX ISA 9.1
    (every device pass, -fatbin: nvcc's generic compute_107 pass included; the host
    compilation adds nothing here), two at a time."""
    nvcc = toolkits.require("nvcc", "13.5")
    out = tmp_path_factory.mktemp("newer")
    pipeline.generate(OLD_SPEC, out / "old")
    include = out / "old" / "include"

    def build(name: str) -> tuple[str, tuple[int, str, str]]:
        arch, defines = BUILDS[name]
        work = out / re.sub(r"\W", "_", name)
        work.mkdir()
        return name, _build(nvcc, include, arch, work, *defines)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, BUILDS))


def _build(nvcc: str, include: Path, arch: str, tmp: Path, *defines: str
           ) -> tuple[int, str, str]:
    src = tmp / "k.cu"
    src.write_text(KERNEL)
    keep = tmp / "keep"
    keep.mkdir(exist_ok=True)
    proc = subprocess.run([nvcc, "-std=c++17", f"-arch={arch}", f"-I{include}", "-fatbin",
                           "--keep", f"--keep-dir={keep}", *(f"-D{d}" for d in defines),
                           "-o", str(tmp / "k.fatbin"), str(src)],
                          capture_output=True, text=True, check=False)
    ptx = "\n".join(p.read_text() for p in sorted(keep.glob("*.ptx")))
    return proc.returncode, proc.stdout + proc.stderr, ptx


@pytest.mark.parametrize("arch", ["sm_107", "sm_107a", "sm_107f"])
def test_and_later_forms_build_on_a_target_newer_than_the_spec(
        built: dict[str, tuple[int, str, str]], arch: str) -> None:
    rc, out, ptx = built[f"and-later {arch}"]
    assert rc == 0, out[-3000:]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx


@pytest.mark.parametrize("arch", ["sm_107a", "sm_107f"])
def test_specific_forms_fail_saying_the_target_is_newer_than_the_spec(
        built: dict[str, tuple[int, str, str]], arch: str) -> None:
    rc, out, _ = built[f"specific {arch}"]
    assert rc != 0
    m = NEWER.search(out)
    assert m, out[-3000:]
    assert (m.group(2), m.group(3)) == ("9", "0")  # the spec's newest PTX ISA


def test_specific_forms_on_a_newer_baseline_target_are_unsupported(
        built: dict[str, tuple[int, str, str]]) -> None:
    rc, out, _ = built["specific sm_107"]
    assert rc != 0
    assert "Unresolved extern function 'ptxgen_unsupported_target_tcgen05_mma_is_only_on" in out
    assert not NEWER.search(out)


@pytest.mark.parametrize("arch", ["sm_107a", "sm_107f"])
def test_the_opt_in_macro_emits_the_form(built: dict[str, tuple[int, str, str]],
                                         arch: str) -> None:
    rc, out, ptx = built[f"opt-in {arch}"]
    assert rc == 0, out[-3000:]
    assert "tcgen05.mma.cta_group::1.kind::f16" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
