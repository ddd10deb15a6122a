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
FENCE = DOC94 / "9.7.15.4-parallel-synchronization-and-communication-instructionsmembarfence.md"

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


BLOCK2 = """---
title: "9.9.8. Fixture"
section: "9.9.8"
version: "9.4"
---

####  9.9.8. Fixture instruction: `bar`

Syntax

```ptx
bar.q{::dimension}.fence_qualifiers.b32 d;

::dimension = { ::x, ::y }
.fence_qualifiers = { .to::from.release.scope }
.to::from = { .tensormap::generic }
.scope = { .cta, .sys }
```

Description

Nothing.
"""


def test_set_names_inside_values_and_placeholder_slots(tmp_path: Path) -> None:
    f = tmp_path / "fixture.md"
    f.write_text(BLOCK2)
    (t,) = syntax.templates_of(markdown.read([f]).sections[0])
    assert t.sets["fence_qualifiers"].values == [".tensormap::generic.release.cta",
                                                 ".tensormap::generic.release.sys"]
    assert t.slots() == ["::dimension", "fence_qualifiers"]
    rx = t.regex()[0]
    assert rx.match("bar.q::y.tensormap::generic.release.sys.b32")
    assert rx.match("bar.q.tensormap::generic.release.cta.b32")
    assert not rx.match("bar.q::dimension.tensormap::generic.release.cta.b32")


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


def test_the_async_copy_and_fence_sections_agree(
        capsys: pytest.CaptureFixture[str]) -> None:
    """cp.async.bulk{,.tensor} and cp.reduce.async.bulk{,.tensor} (the spec writes
    .override::global_address before .bulk_group, the document after it: the same forms,
    ptxas reads both orders), fence.proxy and membar.proxy (document errata recorded)."""
    code, props = _check(capsys, ASYNC_COPY)
    assert code == 0 and props == [], [p["key"] for p in props]
    code, props = _check(capsys, FENCE)
    assert code == 0 and props == [], [p["key"] for p in props]


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


def test_membar_proxy_async_is_a_form_ptxas_130_refuses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The 9.4 document gives membar.proxy the .async proxy kind; ptxas 13.5 assembles it
    from 8.0 on sm_90a, ptxas 13.0 refuses it: the spec's form, with toolkit 13.0's
    deviation."""
    p135, p130 = toolkits.require("ptxas", "13.5"), toolkits.require("ptxas", "13.0")
    assert _assemble(p135, tmp_path, "8.0", "membar.proxy.async;") == ""
    assert "Illegal modifier '.async'" in _assemble(p130, tmp_path, "9.0", "membar.proxy.async;")
    assert main(["support", "membar.proxy.async", "--target", "sm_90a", "--ptx-isa", "8.0"]) == 0
    assert main(["support", "membar.proxy.async", "--target", "sm_90a", "--ptx-isa", "9.0",
                 "--toolkit", "13.0"]) == 1
    capsys.readouterr()


TCGEN05_MMA = DOC94 / ("9.7.18.10-tensorcore-5th-generation-matrix-multiply-and-accumulate-"
                       "operations.md")


def test_table_62_against_table_51_ti16_transpose() -> None:
    """Table 62 says .kind::ti16 transposes A and B, Table 51 (and the spec) that its
    transpose bits are 0: the check sees the contradiction, and the spec records it as the
    document's (doc_errata t62-ti16-*), so `doc check` proposes it no more."""
    from ptxgen import pipeline
    from ptxgen.doc.check import check_support_tables, errata_keys, spec_layouts

    docs = pipeline.load_documents(ROOT / "spec")
    found = check_support_tables(markdown.read([TCGEN05_MMA]), spec_layouts(docs))
    keys = sorted(p.key for p in found)
    assert keys == ["descriptor:instr_desc:transpose_a:ti16:supported",
                    "descriptor:instr_desc:transpose_b:ti16:supported"]
    assert all("says Yes, the spec's codes are [0]" in p.message for p in found)
    assert set(keys) <= errata_keys(docs)
