"""``ptxgen scan`` and ``ptxgen support -`` on sources written for these tests
(tests/fixtures/scan): the reader's statements (literal concatenation, macros, escapes,
vector braces, scopes, labels, predicates, #if branches) and the report's verdicts,
which come from the spec (``lookup``) and the generated wrappers (``calls_for``)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT
from ptxgen.isa import ptx
from ptxgen.scan.report import report
from ptxgen.source import read_paths, read_source

FIXTURE = ROOT / "tests" / "fixtures" / "scan"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ptxgen", *args], capture_output=True,
                          text=True, check=False, input=stdin)


def test_reader_statements() -> None:
    got = [(s.line, s.block, s.text, s.predicate, s.label, s.depth, s.conditions)
           for s in read_paths([FIXTURE])]
    assert got[0] == (6, 0, "ldmatrix.sync.aligned.x2.m8n8.shared.b16 {%0, %1}, [%2]", "",
                      "", 0, ())
    assert (13, 1, ".reg .pred P1", "", "", 1, ()) in got
    assert (14, 1, "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1", "", "LAB_WAIT",
            1, ()) in got
    assert (16, 1, "bra DONE", "@P1", "", 1, ()) in got
    ifs = [(s.text, s.conditions) for s in read_paths([FIXTURE]) if s.opcode.startswith("bar")]
    assert ifs == [("bar.sync %0, %1", ("#if __CUDA_ARCH__ >= 900",)),
                   ("barrier.sync.aligned %0, %1",
                    ("#elif defined(OLD) (of #if __CUDA_ARCH__ >= 900)",)),
                   ("bar.arrive %[id], %[n]", ("#else (of #if __CUDA_ARCH__ >= 900)",))]
    texts = [s.text for s in read_paths([FIXTURE])]
    assert texts.count("fence.proxy.async.shared::cta") == 2  # one through a #define
    assert "mov.u32 %0, %laneid" in texts  # %% is %


def test_adjacent_literals_and_escapes() -> None:
    src = 'asm("add.s32 %0, %1, 1;" "\\n\\t" "cvt.rn.f16.f32 %0, %1;\\n" : "=r"(x));'
    assert [s.text for s in read_source(src)] == ["add.s32 %0, %1, 1", "cvt.rn.f16.f32 %0, %1"]
    tight = read_source('asm("tcgen05.ld.sync.aligned.32x32b.x1.b32{%0},[%1];" : "=r"(x));')
    assert tight[0].opcode == "tcgen05.ld.sync.aligned.32x32b.x1.b32"


def test_report_verdicts_and_blocks() -> None:
    result = report(ptx.instruction_set(), read_paths([FIXTURE]))
    rows = {r["ptx"]: r for r in result["statements"] if r["kind"] == "instruction"}
    ld = rows["ldmatrix.sync.aligned.x2.m8n8.shared.b16 {%0, %1}, [%2]"]
    assert ld["known"] and ld["isa_opcode"] == "ldmatrix.sync.aligned.m8n8.x2.shared.b16"
    assert ld["cpp"].startswith("ptxgen::ptx::ldmatrix</*shape=*/ldmatrix_shape::m8n8")
    assert "sm_75" in ld["targets"]
    assert rows["bar.arrive %[id], %[n]"]["isa_opcode"] == "barrier.arrive.aligned"
    # %laneid is one of the special registers (spec/instructions/special_registers.yaml)
    assert rows["mov.u32 %0, %laneid"]["known"]
    assert rows["mov.u32 %0, %laneid"]["cpp"] == "d = ptxgen::ptx::laneid();"
    assert rows["mov.u32 %0, %laneid"]["python"] == \
        'ptxgen.isa.ptx.mov_special(type="u32", d=d, laneid=True)'
    blocks = {b["line"]: b for b in result["blocks"]}
    assert blocks[13]["replaceable"] is False  # bra is not in the spec
    assert blocks[34]["replaceable"] and len(blocks[34]["replacement"]) == 2
    s = result["summary"]
    assert (s["statements"], s["statements_known"], s["blocks"], s["blocks_replaceable"]) \
        == (11, 9, 8, 7)
    assert s["uncovered_opcodes"] == {"bra": 2}


def test_scan_cli() -> None:
    res = run("scan", str(FIXTURE))
    assert res.returncode == 1 and res.stderr == ""
    assert res.stdout.splitlines()[:2] == ["statements: 9 of 11 known (81.8%)",
                                           "asm blocks: 7 of 8 replaceable (87.5%)"]
    data = json.loads(run("scan", "--json", str(FIXTURE)).stdout)
    assert data["summary"]["statements"] == 11
    missing = run("scan", "no/such/dir")
    assert (missing.returncode, missing.stderr) == (
        2, "ptxgen: error: no/such/dir: no such file or folder\n")


def test_support_batch_in_order() -> None:
    res = run("support", "-", "--json", stdin="bar.sync\n\nfoo.bar\nwgmma.fence.sync.aligned\n")
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["opcode"] for x in lines] == ["bar.sync", "foo.bar", "wgmma.fence.sync.aligned"]
    assert [x["valid"] for x in lines] == [True, False, True]
    assert lines[0]["isa_opcode"] == "barrier.sync.aligned"
    assert res.returncode == 1  # one opcode is no form
    ok = run("support", "-", "--target", "sm_90a", stdin="wgmma.fence.sync.aligned\n")
    assert ok.returncode == 0
    assert ok.stdout.startswith("wgmma.fence.sync.aligned: supported on sm_90a")
