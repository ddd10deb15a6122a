"""Issue 26: the general cvt (spec/instructions/cvt.yaml) -- integer <-> integer with .sat,
integer <-> float, float <-> float with .rn/.rz/.rm/.rp and .rni/.rzi/.rmi/.rpi, .ftz, the .bf16
conversions of sm_90, the .rs stochastic rounding with its random bits and cvt.pack -- against
ptxas 13.0 and 13.5 on the facts that shaped the spec, the PTX ISA document's cvt sections,
and `ptxgen scan` of statements written here in the forms kernels write them. The whole
target x version matrix is `python benchmarks/dev_matrix.py cvt.yaml` (no mismatch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import toolkits

from conftest import run_main
from ptxgen.isa import ptx
from ptxgen.model.instructions import PtxFormError, lookup
from ptxgen.scan.report import report
from ptxgen.source import read_paths

DOC = Path(__file__).resolve().parents[2] / "shared" / "ptx-isa-9.4"

# (body, target, version, assembles): each fact the spec states, and its refusal
FACTS = [
    ("cvt.sat.u8.s32 h0, s0;", "sm_75", "6.3", True),       # .u8 does not hold every .s32
    ("cvt.sat.s32.u8 s0, h0;", "sm_75", "6.3", False),      # .s32 holds every .u8
    ("cvt.rni.sat.s8.f32 h0, f0;", "sm_75", "6.3", True),
    ("cvt.s32.f32 s0, f0;", "sm_75", "6.3", False),         # float to integer: rounding needed
    ("cvt.rn.f16.f16 h0, h1;", "sm_75", "6.3", False),      # same type: integer rounding only
    ("cvt.rn.bf16.s8 h0, c0;", "sm_90", "7.8", True),       # .bf16 with .s8 takes a .b8
    ("cvt.rn.bf16.s8 h0, h1;", "sm_90", "7.8", False),      # ... not a wider register
    ("cvt.rn.bf16.f64 h0, d0;", "sm_89", "8.8", False),     # .bf16 general: sm_90
    ("cvt.rn.f32.bf16 f0, h0;", "sm_80", "7.1", True),      # rounded like cvt.f32.bf16
    ("cvt.rs.satfinite.e4m3x4.f32 r0, {f0, f1, f2, f3}, r1;", "sm_100a", "8.7", True),
    ("cvt.rs.satfinite.e4m3x4.f32 r0, {f0, f1, f2, f3}, r1;", "sm_100f", "9.0", False),
    ("cvt.satfinite.rn.e4m3x2.f16x2 h0, r0;", "sm_90", "7.8", True),  # any order ...
    ("cvt.s32.f32.rzi s0, f0;", "sm_75", "6.3", True),
    ("cvt.f32.s32.rn s0, f0;", "sm_75", "6.3", False),      # the first type is d's
    ("cvt.pack.sat.u4.s32.b32 r0, s0, s1, r1;", "sm_75", "6.5", True),
    ("cvt.pack.sat.u4.s32.b32 r0, s0, s1, r1;", "sm_75", "6.4", False),
]
DECLS = (".reg .b8 c<2>;\n.reg .b16 h<2>;\n.reg .b32 r<2>;\n.reg .s32 s<2>;\n"
         ".reg .f32 f<4>;\n.reg .f64 d<2>;\n")


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_agrees_with_the_spec(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    for body, target, version, ok in FACTS:
        rc, out = toolkits.assemble(ptxas, tmp_path, body, target, version, decls=DECLS)
        assert (rc == 0) == ok, f"ptxas {release} {target}@{version} {body}: {out}"
        if "h1;" in body or ("s0, f0;" in body and "rzi" not in body):
            # the registers, not the opcode: see the operand types
            continue
        res = run_main("support", body.split()[0], "--target", target, "--ptx-isa", version)
        assert (res.code == 0) == ok, f"spec {target}@{version} {body}: {res.out}{res.err}"
    form, = lookup(ptx.instruction_set(), "cvt.rn.bf16.s8").forms
    assert [u.type for u in form.operands] == ["b16", "b8"]


def test_support_names_targets_and_versions() -> None:
    for opcode, target, version in [("cvt.rni.sat.s8.f32", "sm_75", "6.3"),
                                    ("cvt.rn.bf16.u64", "sm_90", "7.8"),
                                    ("cvt.rs.relu.satfinite.bf16x2.f32", "sm_100a", "8.7"),
                                    ("cvt.pack.sat.s16.s32", "sm_75", "6.5")]:
        res = run_main("support", opcode, "--json")
        assert res.code == 0, res.err
        support = json.loads(res.out)["support"]
        assert support[target] == version, (opcode, support)
    assert "sm_89" not in json.loads(run_main("support", "cvt.rn.bf16.u64", "--json").out)[
        "support"]


def test_builders() -> None:
    assert ptx.cvt_float(rnd="rzi", sat=True, dtype="u8", atype="f32", d="%rs1", a="%f1") == \
        "cvt.rzi.sat.u8.f32 %rs1, %f1;"
    assert ptx.cvt_float(rnd="rs", satfinite=True, dtype="e2m1x4", atype="f32", d="%rs1",
                         v=["%f1", "%f2", "%f3", "%f4"], rbits="%r1") == \
        "cvt.rs.satfinite.e2m1x4.f32 %rs1, {%f1, %f2, %f3, %f4}, %r1;"
    assert ptx.cvt_pack(saturate="sat", dtype="s8", atype="s32", ctype="b32", d="%r1",
                        a="%r2", b="%r3", c="%r4") == "cvt.pack.sat.s8.s32.b32 %r1, %r2, %r3, %r4;"
    with pytest.raises(PtxFormError):
        ptx.cvt_float(sat=True, dtype="s32", atype="u8", d="%r1", a="%rs1")


def test_scan_knows_the_general_forms(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(
        '__device__ int f(float x, unsigned long long w, int a, int b) {\n'
        '  int r; unsigned u; unsigned short h;\n'
        '  asm("cvt.rni.sat.s32.f32 %0, %1;" : "=r"(r) : "f"(x));\n'
        '  asm("cvt.u32.u64 %0, %1;" : "=r"(u) : "l"(w));\n'
        '  asm("cvt.rn.e4m3x2.f32.satfinite %0, %1, %2;" : "=h"(h) : "f"(x), "f"(x));\n'
        '  asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(u) : "r"(a), "r"(b), "r"(u));\n'
        '  return r + u + h;\n}\n')
    result = report(ptx.instruction_set(), read_paths([src]))
    rows = {r["ptx"].split()[0]: r for r in result["statements"] if r["kind"] == "instruction"}
    assert all(r["known"] for r in rows.values()), [r for r in rows.values() if not r["known"]]
    assert rows["cvt.rn.e4m3x2.f32.satfinite"]["isa_opcode"] == "cvt.rn.satfinite.e4m3x2.f32"
    assert rows["cvt.rni.sat.s32.f32"]["cpp"].startswith(
        "d = ptxgen::ptx::cvt_s32_f32</*rnd=*/cvt_float_rnd::rni, /*ftz=*/false, /*sat=*/true>")
    assert result["summary"]["blocks_replaceable"] == 4


@pytest.mark.skipif(not DOC.is_dir(), reason="the PTX ISA 9.4 document (../shared) is absent")
def test_doc_check_of_the_cvt_sections(capsys: pytest.CaptureFixture[str]) -> None:
    from ptxgen.cli import main
    sections = sorted(str(p) for p in (DOC / "9-instruction-set").glob("9.7.10.2[45]-*cvt*"))
    notes = sorted(str(p) for p in (DOC / "13-release-notes").glob("13.[1-4]-*"))
    main(["doc", "check", *sections, *notes, "--json"])
    keys = {p["key"] for p in json.loads(capsys.readouterr().out)["proposals"]
            if p["key"].startswith("instruction:cvt")}
    # what the spec does not have yet (the instruction's partial): nothing else
    assert keys == {"instruction:cvt_float:release:9.4:.ue5m3x2",
                    "instruction:cvt_float:release:9.4:.scaled::n1::ue8m0",
                    "instruction:cvt_float:release:9.1:.s2f6x2"}
