"""Issue 14 part 1: wrapper headers cheap to include (nvcc 13.0).

* Each nvcc pass reads the asm statements of a family only where the target can have a
  form of it: the preprocessed source of every pass (nvcc --keep: the host pass's
  .cpp4.ii, each device pass's .cpp1.ii) shows which asm statements the compiler front
  ends parse. The host pass reads none, the generic compute_90 pass of an sm_90a build
  no wgmma and no tcgen05, the sm_90a pass wgmma but no tcgen05, the sm_100a pass
  tcgen05 but no wgmma.
* ``ptxgen generate --select PATTERN`` writes the asm statements of the forms it selects
  only (exactly the PTX ISA's forms that match); a selected form compiles to its
  instruction, another one fails with a static_assert naming the selection, and
  ``ptxgen check`` compares with the selection given again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import toolkits
from cpp import harness
from cpp.harness import INCLUDE
from gpu import forms as gpu_forms

from conftest import run_cli

ALL = '#include "ptxgen/ptx.hpp"\n__global__ void k() {}\n'

# the first instruction of each family's asm statements, as the preprocessed text has it
FAMILIES = {"wgmma": r'"wgmma\.mma_async', "tcgen05_mma": r'"tcgen05\.mma',
            "ldmatrix": r'"ldmatrix\.sync'}


def _passes(tmp_path: Path, arch: str, include: Path = INCLUDE) -> dict[str, str]:
    """{pass: preprocessed source} of an nvcc -c of a TU that includes every wrapper."""
    src = tmp_path / "all.cu"
    src.write_text(ALL)
    keep = tmp_path / f"keep_{arch}"
    keep.mkdir()
    harness.run([harness.tool("nvcc"), "-std=c++17", f"-I{include}", f"-arch={arch}", "-c",
                 str(src), "-o", str(tmp_path / "all.o"), "--keep", f"--keep-dir={keep}"])
    out = {}
    for ii in keep.glob("*.ii"):
        m = re.search(r"\.(compute_\w+)\.cpp1\.ii$", ii.name)
        out[m.group(1) if m else "host"] = ii.read_text(errors="replace")
    return out


def _has(text: str, family: str) -> bool:
    return re.search(FAMILIES[family], text) is not None


@pytest.mark.parametrize(("arch", "expected"), [
    ("sm_90a", {"host": set(), "compute_90": {"ldmatrix"},
                "compute_90a": {"wgmma", "ldmatrix"}}),
    ("sm_100a", {"host": set(), "compute_100": {"ldmatrix"},
                 "compute_100a": {"tcgen05_mma", "ldmatrix"}}),
])
def test_each_pass_reads_only_the_forms_its_target_can_have(
        tmp_path: Path, arch: str, expected: dict[str, set[str]]) -> None:
    passes = _passes(tmp_path, arch)
    assert set(passes) == set(expected), sorted(passes)
    got = {name: {f for f in FAMILIES if _has(text, f)} for name, text in passes.items()}
    assert got == expected
    # a pass never even opens the wrappers (.device.hpp) or the asm statements (.forms.hpp)
    # of a family its target has no form of: the line markers name every file read
    opened = {name: {f for f in FAMILIES if re.search(
        r'^# \d+ "[^"]*/ptxgen/ptx/' + f + r'\.(device|forms)\.hpp"', text, re.M)}
        for name, text in passes.items()}
    assert opened == expected
    # within a family, a wrapper whose forms the target cannot have is left out too:
    # .im2col::w loads are sm_100 and later, block-scaled mma.sync sm_120a / sm_121a only
    device = passes["compute_" + arch.removeprefix("sm_")]
    assert ("cp_async_bulk_tensor_load_im2col_w_forms0_table" in device) == (arch == "sm_100a")
    assert "mma_sync_block_scale_forms0_table" not in device
    assert "mma_sync_forms0_table" in device


SELECT = r"m64n(128|256)k16\.f32\.bf16"
# by the PTX ISA: dense wgmma with .bf16 inputs has K = 16 and .f32 accumulators; A from a
# descriptor or from registers, N = 128 and 256; nothing else matches (sparse has K = 32)
SELECTED = {f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16" for n in (128, 256)}

KERNEL = """#include "ptxgen/ptx.hpp"
using namespace ptxgen::ptx;
__global__ void k(unsigned long long a, unsigned long long b, float* out) {
  float d[64] = {};
  wgmma_mma_async<128, wgmma_mma_async_dtype::f32, wgmma_mma_async_atype::%s,
                  wgmma_mma_async_btype::%s>(d, a, b, true, imm<1>, imm<1>, imm<0>, imm<0>);
  fence_operand(d);
  out[0] = d[0];
}
"""


@pytest.fixture(scope="module")
def selected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("select") / "gen"
    res = run_cli("generate", "--select", SELECT, "--out", str(out))
    assert res.code == 0, res.err
    return out


def test_select_writes_the_selected_forms_only(selected: Path) -> None:
    ptx = selected / "include" / "ptxgen" / "ptx"
    asm = []
    for forms in ptx.glob("*.forms.hpp"):  # the opcode tables ("" for a form left out)
        text = forms.read_text()
        for name in re.findall(r"(\w+)_opcode_pieces\[\] =", text):
            asm += [op for op in gpu_forms.opcodes(text, name) if op]
    assert sorted(asm) == sorted([*SELECTED, *SELECTED])  # A from a descriptor, from registers
    manifest = json.loads((selected / "MANIFEST.json").read_text())
    assert manifest["select"] == SELECT


def test_check_compares_with_the_same_selection(selected: Path) -> None:
    assert run_cli("check", "--out", str(selected), "--select", SELECT).code == 0
    # without --select: the selection its manifest records (issue 28)
    assert run_cli("check", "--out", str(selected)).code == 0
    res = run_cli("check", "--out", str(selected), "--select", "wgmma.*m64n8k16")
    assert res.code == 1
    assert "wgmma.forms.hpp: changed" in res.out


@pytest.mark.parametrize(("pattern", "message"), [
    ("(", "not a regular expression"),
    ("no_such_instruction", "selects no instruction form"),
])
def test_select_refuses_a_bad_pattern(tmp_path: Path, pattern: str, message: str) -> None:
    res = run_cli("generate", "--select", pattern, "--out", str(tmp_path / "gen"))
    assert res.code == 2
    assert message in res.err
    assert not (tmp_path / "gen").exists()


def test_a_selected_form_compiles_to_its_instruction(tmp_path: Path, selected: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(KERNEL % ("bf16", "bf16"))
    harness.run([harness.tool("nvcc"), *harness.NVCC_FLAGS[:-1],
                 f"-I{selected / 'include'}", "-arch=sm_90a", "-ptx", str(src), "-o",
                 str(tmp_path / "k.ptx")])
    ptx = (tmp_path / "k.ptx").read_text()
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " in ptx


def test_a_form_outside_the_selection_is_a_static_assert(tmp_path: Path,
                                                         selected: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(KERNEL % ("f16", "f16"))  # a valid form, but not selected
    proc = harness.run([harness.tool("nvcc"), "-std=c++17", f"-I{selected / 'include'}",
                        "-arch=sm_90a", "-c", str(src), "-o", str(tmp_path / "k.o")], ok=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    first = out.split("error:", 2)[1]
    assert "static assertion failed" in first, out
    assert "this form is not in the selection these headers were generated with" in first
    assert f"ptxgen generate --select {SELECT}" in first


OTHER_FAMILY = """#include "ptxgen/ptx.hpp"
namespace px = ptxgen::ptx;
__global__ void k() {
  __shared__ unsigned long long bar;
  px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::shared_cta>(
      &bar, 1u);
}
"""


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_a_wrapper_of_a_family_left_out_is_a_static_assert(
        tmp_path: Path, selected: Path, release: str) -> None:
    """Issue 28: a wrapper none of whose forms is selected (mbarrier_init, when the
    selection is wgmma's) is the selection's static_assert on a target that has its forms,
    not an unresolved extern claiming the target lacks them; the full headers compile."""
    nvcc = toolkits.find("nvcc", release)
    assert nvcc is not None, f"nvcc of CUDA {release}"
    src = tmp_path / "k.cu"
    src.write_text(OTHER_FAMILY)
    proc = harness.run([nvcc, "-std=c++17", f"-I{selected / 'include'}", "-arch=sm_90a",
                        "-c", str(src), "-o", str(tmp_path / "k.o")], ok=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Unresolved extern" not in out and "unsupported_target" not in out, out
    first = out.split("error:", 2)[1]
    assert "static assertion failed" in first, out
    assert ("ptxgen: mbarrier_init: no form of it is in the selection these headers were "
            f"generated with (ptxgen generate --select {SELECT})") in first
    harness.run([nvcc, "-std=c++17", f"-I{INCLUDE}", "-arch=sm_90a", "-c", str(src), "-o",
                 str(tmp_path / "k.o")])


# A kernel with the call shapes a user writes: qualifiers as template arguments, a braced
# coordinate list, an output array, an immediate, a returned token, a return type that
# depends on the qualifiers (mapa), and an operand trait.
CALLS = """#include "ptxgen/ptx.hpp"
namespace px = ptxgen::ptx;
__global__ void k(const void* map, unsigned long long a, unsigned long long b, float* out,
                  unsigned* u) {
  __shared__ unsigned long long bar;
  __shared__ alignas(128) float tile[64];
  px::mbarrier_init<px::mbarrier_init_layout::none, px::mbarrier_init_space::shared_cta>(
      &bar, 1u);
  px::cp_async_bulk_tensor_load<px::cp_async_bulk_tensor_dim::dim_2d,
                                px::cp_async_bulk_tensor_dst::shared_cluster,
                                px::cp_async_bulk_tensor_load_mode::tile>(
      tile, map, {static_cast<int>(u[0]), 0}, &bar);
  std::uint64_t token = px::mbarrier_arrive_token<px::mbarrier_arrive_sem::none,
      px::mbarrier_arrive_scope::none, px::mbarrier_arrive_space::shared_cta>(&bar);
  u[1] = px::mapa<px::mapa_address_type::u32, px::mapa_address_space::shared_cluster>(
      u[2], u[3]) + static_cast<unsigned>(token);
  px::wgmma_mma_async_operands<128, px::wgmma_mma_async_dtype::f32,
      px::wgmma_mma_async_atype::bf16, px::wgmma_mma_async_btype::bf16>::d d = {};
  px::wgmma_mma_async<128, px::wgmma_mma_async_dtype::f32, px::wgmma_mma_async_atype::bf16,
                      px::wgmma_mma_async_btype::bf16>(
      d, a, b, true, px::imm<1>, px::imm<1>, px::imm<0>, px::imm<0>);
  px::fence_operand(d);
  out[0] = d[0] + tile[1];
}
"""


@pytest.mark.parametrize("exact", [False, True])
def test_the_host_pass_declares_each_wrapper_once(
        tmp_path: Path, exact: bool) -> None:
    """The host pass (cudafe++ and the host compiler) sees one declaration per wrapper name
    (its operands past the fewest defaulted), which takes the calls a kernel makes with
    any of its operand counts, braced lists too; the device
    pass still compiles the real wrappers to their instructions. With
    PTXGEN_PTX_EXACT_HOST_DECLARATIONS the host pass sees the wrappers themselves."""
    src = tmp_path / "calls.cu"
    src.write_text(CALLS)
    keep = tmp_path / "keep"
    keep.mkdir()
    flags = ["-DPTXGEN_PTX_EXACT_HOST_DECLARATIONS"] if exact else []
    harness.run([harness.tool("nvcc"), "-std=c++17", f"-I{INCLUDE}", "-arch=sm_90a", "-c",
                 *flags, str(src), "-o", str(tmp_path / "calls.o"), "--keep",
                 f"--keep-dir={keep}"])
    host = next(keep.glob("*.cpp4.ii")).read_text(errors="replace")
    # one declaration for every operand count (its overloads take 4 or 5 operands: the
    # fewest, then a defaulted one)
    generic = re.search(r"cp_async_bulk_tensor_load\(detail::host_arg, detail::host_arg, "
                        r"detail::host_arg, detail::host_arg, detail::host_arg = \{\}\)",
                        host)
    exact_decl = re.search(r"cp_async_bulk_tensor_load\(\s*[^)]*tensor_coords", host)
    assert (generic is None, exact_decl is not None) == (exact, exact)
    ptx = harness.run([harness.tool("nvcc"), "-std=c++17", f"-I{INCLUDE}", "-arch=sm_90a",
                       "-ptx", *flags, str(src), "-o", "-"]).stdout
    for opcode in ("mbarrier.init.shared::cta.b64",
                   "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx"
                   "::bytes", "mbarrier.arrive.shared::cta.b64", "mapa.shared::cluster.u32",
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"):
        assert opcode in ptx, opcode


def test_a_host_compiler_parses_the_headers_either_way(tmp_path: Path) -> None:
    """g++ (no CUDA) parses every header with the host declarations and with the exact
    ones."""
    src = tmp_path / "host.cpp"
    src.write_text('#include "ptxgen/ptx.hpp"\nint main() { return 0; }\n')
    for flags in ([], ["-DPTXGEN_PTX_EXACT_HOST_DECLARATIONS"]):
        harness.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                     f"-I{INCLUDE}", *flags, str(src)])
