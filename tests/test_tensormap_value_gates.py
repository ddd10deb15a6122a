"""Issue 15: gates on immediate values (spec ``value_gates``): tensormap.replace ``.elemtype``
13-15 (PTX ISA 8.7, not sm_90a) and ``.swizzle_mode`` 4 (PTX ISA 8.8, sm_103a / sm_107a only),
against ptxas 13.0 / 13.5 and nvcc 13.0 / 13.5.

The builders take the gated values, and refuse them with ``ptx_isa`` older than the gate;
ptxas agrees at the boundaries (12 / 13 / 15 / 16, 3 / 4 / 5) on the targets and versions
the gates name; ``support`` lists the gates' targets; the C++ wrappers refuse a gated value
with a static_assert on a target that has the form but not the value, and build (the
whole nvcc build, generic compute_XX pass included) where the value is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
import toolkits
from cpp import harness
from ptxas import wrappers

from ptxgen.isa.ptx import PtxFormError, support, tensormap_replace

_DECLS = ".reg .b32 r<4>;\n.reg .b64 rd<4>;\n"
ELEMTYPE = "Instruction 'tensormap.replace.elemtype with input value >= 13' requires PTX ISA " \
    ".version 8.7 or later"
SWIZZLE = "Instruction 'tensormap.replace.swizzle_mode with input value == 4' requires PTX " \
    "ISA .version 8.8 or later"


def _text(field: str, value: int, ptx_isa: str | None = None) -> str:
    return tensormap_replace(field=field, space="global", type="b32", addr="rd2",
                             new_val_imm=value, ptx_isa=ptx_isa)


def _assemble(ptxas: str, tmp_path: Path, body: str, target: str, version: str
              ) -> tuple[int, str]:
    return toolkits.assemble(ptxas, tmp_path, body, target, version, _DECLS)


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_elemtype_13_to_15_is_ptxas_gate(tmp_path: Path, release: str) -> None:
    ptxas = toolkits.require("ptxas", release)
    for value in (13, 15):
        text = _text("elemtype", value)
        assert text == f"tensormap.replace.tile.elemtype.global.b1024.b32 [rd2], {value};"
        for target in ("sm_100a", "sm_120a"):
            rc, out = _assemble(ptxas, tmp_path, text, target, "8.7")
            assert rc == 0, (target, out)
        rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "8.6")
        assert rc != 0 and ELEMTYPE in out, out
        rc, out = _assemble(ptxas, tmp_path, text, "sm_90a", "9.0")
        assert rc != 0 and (f"value '{value}' expected to be in range [0..12] when .elemtype"
                            in out), out
    # the boundary below the gate is everywhere, the one above nowhere
    rc, out = _assemble(ptxas, tmp_path, _text("elemtype", 12), "sm_90a", "8.3")
    assert rc == 0, out
    rc, out = _assemble(ptxas, tmp_path, "tensormap.replace.tile.elemtype.global.b1024.b32"
                        " [rd2], 16;", "sm_100a", "9.0")
    assert rc != 0 and "value '16' expected to be in range [0..15]" in out, out


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_swizzle_mode_4_is_ptxas_gate(tmp_path: Path, release: str) -> None:
    ptxas = toolkits.require("ptxas", release)
    text = _text("swizzle_mode", 4)
    rc, out = _assemble(ptxas, tmp_path, text, "sm_103a", "8.8")
    assert rc == 0, out
    rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "8.7")
    assert rc != 0 and SWIZZLE in out, out
    for target in ("sm_100a", "sm_100f", "sm_103f", "sm_110a", "sm_120a", "sm_90a"):
        rc, out = _assemble(ptxas, tmp_path, text, target, "9.0")
        assert rc != 0 and "value '4' expected to be in range [0..3] when .swizzle_mode" in out, \
            (target, out)
    if release == "13.5":  # sm_107 exists from PTX ISA 9.4 (CUDA 13.4)
        rc, out = _assemble(ptxas, tmp_path, text, "sm_107a", "9.4")
        assert rc == 0, out
        rc, out = _assemble(ptxas, tmp_path, text, "sm_107f", "9.5")
        assert rc != 0 and "value '4' expected to be in range [0..3]" in out, out
    rc, out = _assemble(ptxas, tmp_path, "tensormap.replace.tile.swizzle_mode.global.b1024.b32"
                        " [rd2], 5;", "sm_103a", "9.0")
    assert rc != 0 and "value '5' expected to be in range [0..4]" in out, out  # sm_103a's range


def test_the_builders_check_the_version_of_a_value() -> None:
    assert _text("elemtype", 13, ptx_isa="8.7").endswith(", 13;")
    assert _text("swizzle_mode", 4, ptx_isa="8.8").endswith(", 4;")
    with pytest.raises(PtxFormError, match=r"13 is allowed on sm_100f.*from PTX ISA 8\.7.*"
                                           r"not at PTX ISA 8\.6"):
        _text("elemtype", 13, ptx_isa="8.6")
    with pytest.raises(PtxFormError, match=r"4 is allowed on sm_103a, sm_107a from PTX ISA 8\.8"):
        _text("swizzle_mode", 4, ptx_isa="8.7")
    with pytest.raises(PtxFormError, match=r"16 is not allowed; allowed: .*\(13-15 on sm_100f"):
        _text("elemtype", 16)
    with pytest.raises(PtxFormError, match=r"5 is not allowed"):
        _text("swizzle_mode", 5)
    # the version of the form itself (.swizzle_atomicity from 8.6), and unknown versions
    with pytest.raises(PtxFormError, match=r"exists from PTX ISA 8\.6, not at 8\.5"):
        _text("swizzle_atomicity", 1, ptx_isa="8.5")
    with pytest.raises(PtxFormError, match=r"ptx_isa: '8\.9' is not a PTX ISA version"):
        _text("elemtype", 1, ptx_isa="8.9")


def test_support_names_the_value_gates() -> None:
    from ptxgen.isa import ptx
    from ptxgen.support import answer

    code, text = answer(ptx.instruction_set(), "tensormap.replace.tile.swizzle_mode.b1024.b32")
    assert code == 0
    assert ("immediate new_val_imm 4 [swizzle-mode-4]: only on sm_103a (from 8.8), sm_107a "
            "(from 9.4)") in text, text
    lookup = support("tensormap.replace.tile.elemtype.global.b1024.b32")
    assert lookup.valid and all("sm_90a" in f.support.targets for f in lookup.forms)



@pytest.mark.parametrize("version", ["8.6", "8.7", "8.8"])
def test_support_at_a_ptx_isa_version_names_that_views_gate_targets(
        tmp_path: Path, version: str) -> None:
    """``support OPCODE --ptx-isa X.Y`` gives the value gates as of X.Y: the targets that
    exist then and take the values then - those where ptxas 13.0 assembles .elemtype 13
    at .version X.Y, among the targets the form is supported on then - and no gate at
    all where no target has the values yet (8.6)."""
    import json

    from ptxgen.isa import ptx
    from ptxgen.support import answer

    op = "tensormap.replace.tile.elemtype.global.b1024.b32"
    iset = ptx.instruction_set()
    _, text = answer(iset, op, version=version)
    result = json.loads(answer(iset, op, version=version, as_json=True)[1])
    shown = [ln.split()[0] for ln in text.splitlines()[1:] if ln.startswith("  sm_")]
    assert shown and set(shown) <= set(result["support"]), text
    ptxas = toolkits.require("ptxas", "13.0")
    takes_13 = set()
    for target in shown:  # .target sm_101a, assembled with -arch=sm_110a (its ptxas_arch)
        src = tmp_path / f"{target}.ptx"
        src.write_text(f".version {version}\n.target {target}\n.address_size 64\n"
                       f".visible .entry k() {{\n{_DECLS}{_text('elemtype', 13)}\nret;\n}}\n")
        rc, out = toolkits.assemble_file(ptxas, src, iset.targets.get(target).ptxas_arch)
        if rc == 0:
            takes_13.add(target)
        else:
            assert ELEMTYPE in out or "expected to be in range [0..12]" in out, (target, out)
    gates = {g["gate"]: g for g in result["value_gates"]}
    if not takes_13:
        assert "elemtype-13" not in gates and "immediate new_val_imm 13-15" not in text, text
        return
    assert set(gates["elemtype-13"]["support"]) == takes_13, (takes_13, text)
    line = next(ln for ln in text.splitlines() if "[elemtype-13]" in ln)
    assert line.endswith(f" at PTX ISA {version}") and "renamed" not in line, line
    for target, first in gates["elemtype-13"]["support"].items():
        assert f"{target} (from {first})" in line, line
        assert first in ("8.7", "8.8")

KERNEL = """#include <cstdint>
#include "ptxgen/ptx.hpp"

extern "C" __global__ void k(void* tmap) {
    using namespace ptxgen::ptx;
    tensormap_replace_code<tensormap_replace_field::FIELD, tensormap_replace_space::space_global>(
        tmap, imm<VALUE>);
}
"""


def _compile(tmp_path: Path, name: str, field: str, value: int, arch: str,
             exe: str | None, mode: str = "cubin") -> tuple[int, str, dict[str, str]]:
    include = wrappers.snapshot_include(tmp_path)
    src = KERNEL.replace("FIELD", field).replace("VALUE", str(value))
    return wrappers.compile_tu(src, arch, tmp_path / name, mode, include=include, exe=exe)


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_the_wrappers_refuse_a_value_the_target_lacks(tmp_path: Path, release: str) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    exe = toolkits.require("nvcc", release)
    rc, out, _ = _compile(tmp_path, "e90", "elemtype", 13, "sm_90a", exe)
    assert rc != 0 and "new_val_imm 13-15 when field = elemtype is only allowed on sm_100f" \
        in out, out
    rc, out, _ = _compile(tmp_path, "s100", "swizzle_mode", 4, "sm_100a", exe)
    assert rc != 0 and "new_val_imm 4 when field = swizzle_mode is only allowed on sm_103a" \
        in out, out
    rc, out, _ = _compile(tmp_path, "e16", "elemtype", 16, "sm_100a", exe)
    assert rc != 0 and "immediate new_val_imm is out of range for this form" in out, out


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_the_wrappers_build_the_value_where_it_is_allowed(tmp_path: Path, release: str) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    exe = toolkits.require("nvcc", release)
    # whole builds (-c): nvcc's generic compute_100 / compute_103 pass, where the form
    # does not exist, must not trip over the value's check
    for field, value, arch, name in (("elemtype", 15, "sm_100a", "e100"),
                                     ("swizzle_mode", 4, "sm_103a", "s103")):
        rc, out, kernels = _compile(tmp_path, name, field, value, arch, exe, mode="c")
        assert rc == 0, (arch, out)
        body = wrappers.instructions_in(kernels["k"])
        assert any(ln.startswith(f"tensormap.replace.tile.{field}.global.b1024.b32 [")
                   and ln.endswith(f", {value};") for ln in body), body
