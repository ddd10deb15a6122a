"""Issue 26: mov of registers, immediates, packs and unpacks (spec/instructions/mov.yaml),
four instructions named ``mov`` beside the special-register reads of special_registers.yaml.

* An opcode is the forms of every instruction of its name: ``mov.b64`` is a copy, a pack
  and an unpack; ``ptxgen scan`` picks the one its operands are (a special register's
  text before a register), and a special register read with a type other than its own
  (``mov.b64 d, %clock64``: ptxas takes it, the spec's form is ``mov.u64``) is not known.
* ptxas 13.0 and 13.5: the .b128 gate (PTX ISA 8.3) and the element type of a pack (a .b32
  register packs two .b16 elements, not two .b32); the whole matrix of these forms is
  generated/tests/test_ptxas_conformance.py's.
* Names may repeat in the spec; ids may not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import toolkits

from conftest import SPEC
from ptxgen.cli import main
from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError
from ptxgen.scan.report import report
from ptxgen.source import read_source

DECLS = ".reg .b16 h<4>;\n.reg .b32 r<4>;\n.reg .b64 rd<4>;\n"


def test_builders_write_each_shape() -> None:
    assert ptx.mov_value(type="s32", d="%r1", a=-1) == "mov.s32 %r1, -1;"
    assert ptx.mov_pred(d="%p1", a="%p2") == "mov.pred %p1, %p2;"
    assert ptx.mov_pack(type="b64", d="%rd1", pair=["%r1", "%r2"]) == \
        "mov.b64 %rd1, {%r1, %r2};"
    assert ptx.mov_unpack(type="b64", quad=["%h1", "%h2", "%h3", "%h4"], a="%rd1") == \
        "mov.b64 {%h1, %h2, %h3, %h4}, %rd1;"
    with pytest.raises(PtxFormError, match="packs bytes, which are not offered"):
        ptx.mov_pack(type="b32", d="%r1", quad=["a", "b", "c", "e"])
    with pytest.raises(PtxFormError, match=r"exists from PTX ISA 8\.3, not at 8\.2"):
        ptx.mov_value(type="b128", d="%q1", a="%q2", ptx_isa="8.2")


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_agrees(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    b128 = ".reg .b128 q;\n" + ptx.mov_pack(type="b128", d="q", pair=["rd0", "rd1"])
    for body, version, ok in [
            (b128, "8.2", False), (b128, "8.3", True),
            (ptx.mov_pack(type="b32", d="r0", pair=["h0", "h1"]), "6.3", True),
            ("mov.b32 r0, {r1, r2};", "6.3", False),  # a pack's elements: half the width
            (ptx.mov_unpack(type="b64", pair=["r0", "r1"], a="rd0"), "6.3", True),
            (ptx.mov_value(type="u64", d="rd0", a=5), "6.3", True)]:
        rc, out = toolkits.assemble(ptxas, tmp_path, body, "sm_75", version, decls=DECLS)
        assert (rc == 0) == ok, f"{release} {body} @ {version}: {out}"


def test_scan_picks_the_instruction_by_its_operands() -> None:
    src = ('asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(a), "r"(b));\n'
           'asm("mov.b64 {%0, %1}, %2;" : "=r"(a), "=r"(b) : "l"(d));\n'
           'asm("mov.u32 %0, %1;" : "=r"(a) : "r"(b));\n'
           'asm("mov.u32 %0, %%laneid;" : "=r"(a));\n'
           'asm("mov.b64 %0, %%clock64;" : "=l"(d));\n')
    rows = {r["ptx"]: r for r in report(ptx.instruction_set(), read_source(src))["statements"]}
    assert rows["mov.b64 %0, {%1, %2}"]["cpp"] == \
        "d = ptxgen::ptx::mov_pack_b64_x2(/*pair=*/pair);"
    assert rows["mov.b64 {%0, %1}, %2"]["cpp"] == \
        "ptxgen::ptx::mov_unpack_b64_x2(/*pair=*/pair, /*a=*/a);"
    assert rows["mov.u32 %0, %1"]["cpp"] == "d = ptxgen::ptx::mov_u32(/*a=*/a);"
    assert rows["mov.u32 %0, %laneid"]["cpp"] == "d = ptxgen::ptx::laneid();"
    clock = rows["mov.b64 %0, %clock64"]
    assert not clock["known"] and "a type other than its own" in clock["problem"]


def test_support_answers_for_every_instruction_of_the_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["support", "mov.b64"]) == 0
    out = capsys.readouterr().out
    for call in ("mov_b64(", "mov_pack_b64_x2(", "mov_unpack_b64_x4("):
        assert call in out


def test_names_repeat_ids_do_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec"
    (spec / "instructions").mkdir(parents=True)
    shutil.copy(SPEC / "targets.yaml", spec)
    shutil.copytree(SPEC / "schema", spec / "schema")
    text = (SPEC / "instructions" / "mov.yaml").read_text()
    (spec / "instructions" / "mov.yaml").write_text(text)
    assert main(["validate", "--spec", str(spec)]) == 0  # four instructions named mov
    (spec / "instructions" / "mov.yaml").write_text(
        text.replace("id: mov_pred", "id: mov_value", 1))
    assert main(["validate", "--spec", str(spec)]) == 2
    assert "instruction 'mov_value' is also defined" in capsys.readouterr().err
