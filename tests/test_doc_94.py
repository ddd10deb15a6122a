"""`ptxgen doc check` on the PTX ISA 9.4 document's async-copy section and the PTX ISA
Notes: the reading fixes of issue 25 (a template written without its ";", a value set
named inside another set's value, versions older than the support matrix) and the
cp.async.bulk / cp.reduce.async.bulk memory-ordering qualifiers of PTX ISA 9.3, held
against ptxas 13.0 and 13.5."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import toolkits
from conftest import ROOT
from ptxgen.cli import main
from ptxgen.doc import markdown, syntax

DOC94 = ROOT.parent / "shared" / "ptx-isa-9.4" / "9-instruction-set"
ASYNC_COPY = DOC94 / "9.7.10.28-data-movement-and-conversion-instructions-asynchronous-copy.md"
ADD = DOC94 / "9.7.1.1-integer-arithmetic-instructionsadd.md"

BLOCK = """---
title: "9.9.9. Fixture"
section: "9.9.9"
version: "9.4"
---

####  9.9.9. Fixture instruction: `foo`

Syntax

```ptx
foo{.sem}.dst.completion
        [d], [a]

.sem        = { .weak }
.dst        = { .shared::cta }
.completion = { .bytes{.report} }
.report     = { .report::on, .report::off }

foo.sem.scope.dst.completion.type [d], [a];

.sem        = { .relaxed }
.scope      = { .cta, .gpu }
.dst        = { .shared::cta }
.completion = { .bytes{.report} }
.type       = { .b128 }
.report     = { .report::on, .report::off }
```

Description

Nothing.
"""


def _check(capsys: pytest.CaptureFixture[str], doc: Path) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    code = main(["doc", "check", str(doc), "--spec", str(ROOT / "spec"), "--json"])
    return code, json.loads(capsys.readouterr().out)["proposals"]


def test_a_template_without_its_semicolon_ends_at_its_value_sets(tmp_path: Path) -> None:
    f = tmp_path / "fixture.md"
    f.write_text(BLOCK)
    first, second = syntax.templates_of(markdown.read([f]).sections[0])
    assert first.opcode == "foo{.sem}.dst.completion"
    assert first.sets["sem"].values == [".weak"]  # its own set, not the one of the next
    assert second.opcode == "foo.sem.scope.dst.completion.type"
    assert second.sets["sem"].values == [".relaxed"]
    # ".bytes{.report}": the set named inside a value stands for each of its values, in
    # both definitions of .completion
    for t in (first, second):
        assert t.sets["completion"].values == [".bytes", ".bytes.report::on",
                                               ".bytes.report::off"]


def test_versions_older_than_the_support_matrix_agree(
        capsys: pytest.CaptureFixture[str]) -> None:
    """add is "Introduced in PTX ISA version 1.0"; the spec's matrix starts at 6.3, whose
    first entry means "6.3 or earlier", so there is nothing to propose."""
    _, props = _check(capsys, ADD)
    assert not [p for p in props if p["kind"] == "instruction-version"
                and p["key"].startswith("instruction:add_arith:")], props


def test_the_async_copy_section_agrees_on_the_bulk_copies(
        capsys: pytest.CaptureFixture[str]) -> None:
    _, props = _check(capsys, ASYNC_COPY)
    keys = [p["key"] for p in props]
    bulk = [k for k in keys if k.startswith(("instruction:cp_async_bulk:",
                                             "instruction:cp_reduce_async_bulk:"))]
    assert bulk == [], bulk


PTX = """.version {v}
.target sm_90a
.address_size 64
.entry k(.param .u64 a) {{
.reg .b32 r<4>; .reg .b64 rd<2>;
{stmt}
ret;
}}
"""


def _assemble(ptxas: str, tmp_path: Path, version: str, stmt: str) -> str:
    f = tmp_path / "k.ptx"
    f.write_text(PTX.format(v=version, stmt=stmt))
    res = subprocess.run([ptxas, "-arch=sm_90a", str(f), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True, check=False)
    return "" if res.returncode == 0 else res.stderr


RELAXED = ("cp.async.bulk.relaxed.gpu.shared::cta.global.mbarrier::complete_tx::bytes.b128 "
           "[r1], [rd1], r2, [r3];")
BARE = "cp.async.bulk.gpu.shared::cta.global.mbarrier::complete_tx::bytes [r1], [rd1], r2, [r3];"


def test_bulk_sem_scope_is_what_ptxas_135_assembles_and_130_is_lenient(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The spec's form (relaxed.gpu ... .b128, PTX ISA 9.3) assembles with ptxas 13.5; the
    scope without .relaxed is no form (13.5 refuses it), and ptxas 13.0 accepts it at 9.0:
    the 13.0 leniency the sem qualifier records."""
    p135, p130 = toolkits.require("ptxas", "13.5"), toolkits.require("ptxas", "13.0")
    assert _assemble(p135, tmp_path, "9.3", RELAXED) == ""
    assert "requires PTX ISA .version 9.3" in _assemble(p135, tmp_path, "9.2", RELAXED)
    assert "requires modifier '.order'" in _assemble(p135, tmp_path, "9.3", BARE)
    assert _assemble(p130, tmp_path, "9.0", BARE) == ""
    assert main(["support", RELAXED.split()[0], "--target", "sm_90a", "--ptx-isa", "9.3"]) == 0
    assert main(["support", BARE.split()[0], "--target", "sm_90a"]) == 2
    capsys.readouterr()
    spec = (ROOT / "spec" / "instructions" / "cp_async_bulk.yaml").read_text()
    assert 'values: [cta, cluster, gpu, sys]\n          toolkits: ["13.0"]' in spec
