"""The PTX ISA 9.4 document's multimem (fp8 types, .acc::f16, generic addresses,
multimem.st.async / multimem.red.async), barrier.red, tcgen05.mma's .collector::b::op,
spcompress's descriptor (Table 38), the .u8x4/.s8x4 integer forms and the .pred logic
forms, held against the spec, ptxas 13.0 and ptxas 13.5 (issue 25). The whole matrix of
these files is `python benchmarks/dev_matrix.py multimem.yaml sync.yaml tcgen05_mma.yaml
arith.yaml logic.yaml`; here one statement of each kind of new form."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import toolkits

import ptxgen.isa.ptx as ptx
from conftest import ROOT
from ptxgen.cli import main

DOC94 = ROOT.parent / "shared" / "ptx-isa-9.4" / "9-instruction-set"
SECTIONS = [
    "9.7.10.13-data-movement-and-conversion-instructionsmultimem.st.async.md",
    "9.7.10.15-data-movement-and-conversion-instructionsmultimem.ld_reducemultimem.stmultimem.red.md",
    "9.7.15.8-parallel-synchronization-and-communication-instructionsmultimem.red.async.md",
    "9.7.15.1-parallel-synchronization-and-communication-instructionsbarbarrier.md",
    "9.7.18.10-tensorcore-5th-generation-matrix-multiply-and-accumulate-operations.md",
    "9.7.10.30-data-movement-and-conversion-instructionsspcompress.md",
]


@pytest.mark.skipif(not DOC94.is_dir(), reason="../shared/ptx-isa-9.4 is not here")
def test_the_sections_agree_with_the_spec(capsys: pytest.CaptureFixture[str]) -> None:
    """Before this change these six sections made 31 proposals (15 multimem, 13 tcgen05.mma
    .collector::b, barrier.red, the spcompress table); the .e5m2/.e4m3 vectors (8-bit
    register elements, which no inline-asm constraint holds) are left."""
    code = main(["doc", "check", *(str(DOC94 / s) for s in SECTIONS),
                 "--spec", str(ROOT / "spec"), "--json"])
    props = json.loads(capsys.readouterr().out)["proposals"]
    assert code == 1
    assert sorted(p["key"] for p in props) == sorted(
        f"instruction:multimem_{i}:value:type:.{t}" for i in ("ld_reduce", "st")
        for t in ("e5m2", "e4m3"))


KERNEL = """.version {v}
.target {t}
.address_size 64
.visible .entry k() {{
.reg .b64 x, ad, bd; .reg .b32 r<4>, d, i, e<8>, w<4>;
.reg .b16 h<4>; .reg .b8 c<4>; .reg .pred p, q;
{stmt}
ret;
}}
"""

#: (target, PTX ISA version, statement written by the Python builders) of each new form,
#: the oldest version ptxas 13.5 assembles it at.
NEW_FORMS = [
    ("sm_100a", "8.6", ptx.multimem_ld_reduce(op="add", acc_f16=True, vec="v4", type="e5m2x2",
                                              v=["h0", "h1", "h2", "h3"], a="x")),
    ("sm_100f", "8.8", ptx.multimem_st(space="global", vec="v2", type="e4m3x2", v=["h0", "h1"],
                                       a="x")),
    ("sm_90", "8.1", ptx.multimem_red(sem="relaxed", scope="gpu", op="add", type="u32", a="x",
                                      b="r0")),  # generic address
    ("sm_100", "9.3", ptx.multimem_st_async(sem="release", scope="sys", type="u8", a="x",
                                            b="r0")),
    ("sm_100", "9.3", ptx.multimem_red_async(sem="release", scope="gpu", space="global",
                                             op="add", type="u64", a="x", b="ad")),
    ("sm_75", "7.8", ptx.barrier_red(cta=True, op="or", type="pred", p="p", a=1, b=64, c="q")),
    ("sm_75", "6.3", ptx.barrier_red(op="popc", aligned=True, type="u32", d="d", a="r1", c="q")),
    ("sm_120f", "9.2", ptx.add_arith(sat=True, type="s8x4", d="r0", a="r1", b="r2")),
    ("sm_120f", "9.2", ptx.add_arith(sat=True, type="u32", d="r0", a="r1", b="r2")),
    ("sm_120f", "9.2", ptx.max_arith(relu=True, type="s8x4", d="r0", a="r1", b="r2")),
    ("sm_107f", "9.4", ptx.neg_arith(type="s8x4", d="r0", a="r1")),
    ("sm_75", "6.3", ptx.xor_op(type="pred", p="p", q="q", r="p")),
    ("sm_107a", "9.4", ptx.spcompress(elemsize="b8", idxsize="b4", spfactor="sp::2:4", num="x4",
                                      mdata=["r0", "r1"], cdata=[f"w{i}" for i in range(4)],
                                      data=[f"e{i}" for i in range(8)], spdesc="d")),
    ("sm_107a", "9.4", ptx.tcgen05_mma(cta_group=1, kind="ti16", collector_usage="a::fill",
                                       collector_b="lastuse", d_tmem="r0", a_desc="ad",
                                       b_desc="bd", idesc="i", enable_input_d="p")),
]


def _assemble(ptxas: str, tmp: Path, target: str, version: str, stmt: str) -> str:
    f = tmp / "k.ptx"
    f.write_text(KERNEL.format(v=version, t=target, stmt=stmt))
    res = subprocess.run([ptxas, f"-arch={target}", str(f), "-o", str(tmp / "k.o")],
                         capture_output=True, text=True, check=False)
    return "" if res.returncode == 0 else res.stderr


def test_ptxas_135_assembles_the_new_forms_where_the_spec_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ptxas = toolkits.require("ptxas", "13.5")
    for target, version, stmt in NEW_FORMS:
        assert _assemble(ptxas, tmp_path, target, version, stmt) == "", stmt
        capsys.readouterr()
        assert main(["support", stmt.split(" ")[0], "--target", target]) == 0, stmt
        assert f"(from {version})" in capsys.readouterr().out, stmt


def test_the_gates_are_ptxas_135s(tmp_path: Path) -> None:
    """.collector::b::op only on sm_107a/f (ptxas: "Illegal modifier" elsewhere), the fp8
    multimem types not on sm_100 (not a or f), the async multimem forms from 9.3."""
    ptxas = toolkits.require("ptxas", "13.5")
    tmp = tmp_path
    assert "not supported on .target 'sm_110f'" in _assemble(ptxas, tmp, "sm_110f", "9.4",
                                                            "add.u8x4 r0, r1, r2;")
    collector_b = NEW_FORMS[-1][2]
    assert "Illegal modifier '.collector::b::lastuse'" in _assemble(
        ptxas, tmp, "sm_100a", "9.4", collector_b.replace("kind::ti16", "kind::f16"))
    assert "not supported on .target 'sm_100'" in _assemble(ptxas, tmp, "sm_100", "8.6",
                                                           NEW_FORMS[0][2])
    assert "requires PTX ISA .version 9.3" in _assemble(ptxas, tmp, "sm_100", "9.2",
                                                       NEW_FORMS[3][2])


def test_ptxas_130_does_not_read_94(tmp_path: Path) -> None:
    """ptxas 13.0 reads PTX ISA 9.0 at most: the 9.3/9.4 forms are ones it cannot have."""
    ptxas = toolkits.require("ptxas", "13.0")
    tmp = tmp_path
    assert "Unsupported .version 9.4" in _assemble(ptxas, tmp, "sm_100a", "9.4",
                                                   NEW_FORMS[-1][2])
    # the fp8 multimem form is 8.6 on sm_100a: 13.0 agrees with 13.5
    assert _assemble(ptxas, tmp, "sm_100a", "8.6", NEW_FORMS[0][2]) == ""


def test_spcompress_descriptor_encodes_the_documents_example(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Table 38 and its example: spdesc 0x5 is MAXABS with .s8 (codes 1 of each field);
    code 6 of the type is not in the table."""
    capsys.readouterr()
    assert main(["encode", "spcompress_desc", "operation=maxabs", "data_type=bf16_or_s8"]) == 0
    assert capsys.readouterr().out.strip() == "0x00000005"
    assert main(["encode", "spcompress_desc", "operation=max", "data_type=6"]) == 2
    assert "data_type" in capsys.readouterr().err
