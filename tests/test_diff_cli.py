"""`ptxgen diff OLD NEW`: the command's contract (exit codes, formats, git revisions,
errors) and the real spec."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, SPEC, Result, run_main, spec_subset
from ptxgen.diff import rules
from ptxgen.diff.render import rules_table

FIXTURES = Path("tests/fixtures/diff")  # relative: what a user would type at the root


def pair(case: str) -> tuple[str, str]:
    return str(FIXTURES / case / "old"), str(FIXTURES / case / "new")


def one_error_line(res: Result) -> str:
    assert res.code == 2, (res.out, res.err)
    assert res.out == ""
    lines = res.err.splitlines()
    assert len(lines) == 1, res.err
    return lines[0]


# -- exit codes and formats -------------------------------------------------------------------

def test_exit_0_when_nothing_breaks() -> None:
    res = run_main("diff", *pair("value-added"))
    assert (res.code, res.err) == (0, "")
    assert "value-added" in res.out and "compatible" in res.out
    assert res.out.splitlines()[1] == "1 change: 0 breaking, 1 compatible, 0 notes"


def test_exit_1_when_something_breaks() -> None:
    res = run_main("diff", *pair("field-moved"))
    assert (res.code, res.err) == (1, "")
    old, new = pair("field-moved")
    assert f"old {old}/demo_desc.yaml:45  new {new}/demo_desc.yaml:45" in res.out


def test_exit_0_and_no_changes_for_the_same_spec() -> None:
    res = run_main("diff", "spec", "spec")
    assert (res.code, res.err) == (0, "")
    assert res.out.splitlines()[1] == "no changes"


def test_json_shape() -> None:
    res = run_main("diff", *pair("field-resized-block-scaled-m"), "--format", "json",
                  "--generated")
    assert res.code == 1, res.err
    data = json.loads(res.out)
    assert set(data) == {"schema", "old", "new", "summary", "changes", "generated"}
    assert data["schema"] == "ptxgen-diff/1"
    assert set(data["old"]) == {"label", "type", "spec", "commit", "ptx_isa"}
    assert data["old"]["type"] == "folder" and data["old"]["commit"] is None
    assert data["old"]["ptx_isa"] is None  # the whole spec, not a version view
    assert data["summary"] == {"breaking": 3, "compatible": 0, "note": 2, "exit_code": 1}
    for c in data["changes"]:
        assert set(c) == {"rule", "severity", "area", "subject", "kinds", "message", "old",
                          "new", "before", "after"}
        assert set(c["old"]) == set(c["new"]) == {"file", "line"}
    assert set(data["generated"]) == {"files", "symbols"}
    for f in data["generated"]["files"]:
        assert set(f) == {"path", "status", "added_lines", "removed_lines"}
    for s in data["generated"]["symbols"]:
        assert set(s) == {"symbol", "status", "python", "cpp", "files", "before", "after"}


def test_json_without_generated_has_null() -> None:
    data = json.loads(run_main("diff", *pair("value-added"), "--format", "json").out)
    assert data["generated"] is None
    assert data["summary"]["exit_code"] == 0


def test_markdown() -> None:
    res = run_main("diff", *pair("field-moved"), "--format", "markdown", "--generated")
    assert res.code == 1
    lines = res.out.splitlines()
    assert lines[0].startswith("### ptxgen diff: `")
    assert "**1 breaking**, 0 compatible, 2 notes" in lines
    assert "#### Breaking" in lines
    row = next(x for x in lines if x.startswith("| `field-moved`"))
    assert row.count("|") == 7  # six cells
    assert "<details><summary>Generated files:" in res.out


def test_text_generated_section() -> None:
    res = run_main("diff", *pair("field-renamed"), "--generated")
    assert "generated files (below the output folder):" in res.out
    assert re.search(r"^  removed +DemoDesc\.shift$", res.out, re.M)
    assert re.search(r"^  added +DemoDesc\.max_shift$", res.out, re.M)
    assert re.search(r"^  changed +python/demo_desc\.py \(\+\d+ -\d+\)$", res.out, re.M)


# -- errors -----------------------------------------------------------------------------------

def test_neither_folder_nor_revision() -> None:
    line = one_error_line(run_main("diff", "no/such/folder", "spec"))
    assert line == ("ptxgen: error: OLD: 'no/such/folder' is neither a spec folder nor a git "
                    "revision")


def test_not_in_a_git_repository(tmp_path: Path) -> None:
    res = run_main("diff", "HEAD", str(ROOT / "spec"), cwd=tmp_path)
    # outside a project, ptxgen says in one line that it uses the installed spec (issue 28)
    notice, line = res.err.strip().splitlines()
    assert notice.startswith("ptxgen: no project here") and res.code == 2
    assert line.startswith("ptxgen: error: OLD: 'HEAD' is not a spec folder")


@pytest.mark.parametrize("args", [("diff",), ("diff", "spec"), ("diff", "spec", "spec",
                                                                 "--format", "html")])
def test_usage_errors(args: tuple[str, ...]) -> None:
    assert one_error_line(run_main(*args)).startswith("ptxgen: error:")


def test_invalid_spec_reports_file_line_col(tmp_path: Path) -> None:
    put_spec(tmp_path, "field-moved", "new", inside="broken")
    path = tmp_path / "broken" / "descriptors" / "demo_desc.yaml"
    path.write_text(path.read_text().replace("bits: 9-14", "bits: 9-40"))
    res = run_main("diff", str(ROOT / FIXTURES / "field-moved" / "old"), str(tmp_path / "broken"))
    assert res.code == 2 and res.out == ""
    assert re.search(r"broken/descriptors/demo_desc\.yaml:\d+:\d+: .*bits 9-40", res.err)


# -- git revisions ----------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    res = subprocess.run(["git", "-c", "user.name=ptxgen", "-c", "user.email=ptxgen@example.com",
                          "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
                         cwd=repo, capture_output=True, text=True, check=True)
    return res.stdout.strip()


def put_spec(repo: Path, case: str, side: str, inside: str = "spec") -> None:
    """The fixture as ``inside/descriptors/``, with its own copy of the schema."""
    spec = repo / inside
    shutil.rmtree(spec, ignore_errors=True)
    (spec / "schema").mkdir(parents=True)
    (spec / "descriptors").mkdir()
    shutil.copy(SPEC / "schema" / "descriptor.schema.json", spec / "schema")
    for f in (ROOT / FIXTURES / case / side).glob("*.yaml"):
        text = re.sub(r"\$schema=\S+", "$schema=../schema/descriptor.schema.json", f.read_text())
        (spec / "descriptors" / f.name).write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository: commit 1 (tag v1) holds field-moved/old, commit 2 its new side."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    put_spec(r, "field-moved", "old")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "old")
    git(r, "tag", "v1")
    put_spec(r, "field-moved", "new")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "new")
    return r


def test_git_revisions(repo: Path) -> None:
    res = run_main("diff", "HEAD~1", "HEAD", "--format", "json", cwd=repo)
    assert res.code == 1, res.err
    data = json.loads(res.out)
    assert data["old"]["type"] == data["new"]["type"] == "git"
    assert data["old"]["commit"] == git(repo, "rev-parse", "HEAD~1")
    assert data["old"]["spec"] == "spec"
    moved = next(c for c in data["changes"] if c["rule"] == "field-moved")
    assert moved["old"] == {"file": "spec/descriptors/demo_desc.yaml", "line": 45}


def test_git_locations_in_text_name_the_revision(repo: Path) -> None:
    res = run_main("diff", "v1", "HEAD", cwd=repo)
    assert res.code == 1, res.err
    assert ("old v1:spec/descriptors/demo_desc.yaml:45  "
            "new HEAD:spec/descriptors/demo_desc.yaml:45") in res.out


def test_git_revision_against_the_working_tree(repo: Path) -> None:
    res = run_main("diff", "v1", "spec", cwd=repo)
    assert res.code == 1, res.err
    assert "field-moved" in res.out
    assert run_main("diff", "HEAD", "spec", cwd=repo).code == 0


def test_git_revision_with_path_and_spec_option(repo: Path) -> None:
    put_spec(repo, "field-moved", "old", inside="data/spec")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "copy")
    assert run_main("diff", "HEAD:data/spec", "HEAD:spec", cwd=repo).code == 1
    assert run_main("diff", "HEAD", "HEAD~1", "--spec", "data/spec", cwd=repo).code == 2
    res = run_main("diff", "HEAD", "v1", "--spec", "spec", cwd=repo)
    assert res.code == 1, res.err  # field-moved/new -> field-moved/old: n moves back
    assert "field-moved" in res.out


def test_git_revision_without_the_folder(repo: Path) -> None:
    line = one_error_line(run_main("diff", "HEAD:nowhere", "HEAD", cwd=repo))
    assert line == "ptxgen: error: OLD: revision HEAD has no folder 'nowhere'"


def test_git_revision_that_does_not_validate(repo: Path) -> None:
    path = repo / "spec" / "descriptors" / "demo_desc.yaml"
    path.write_text(path.read_text().replace("bits: 9-14", "bits: 9-40"))
    git(repo, "commit", "-qam", "broken")
    res = run_main("diff", "HEAD~1", "HEAD", cwd=repo)
    assert res.code == 2 and res.out == ""
    assert re.search(r"^HEAD:spec/descriptors/demo_desc\.yaml:\d+:\d+: .*9-40", res.err, re.M)


# -- the real spec ----------------------------------------------------------------------------

def test_real_spec_block_scaled_m_as_cutlass_writes_it(tmp_path: Path) -> None:
    """OLD: the real spec with CUTLASS's M >> 4 in bits 24-28 for the block-scaled kinds
    (Tables 43 and 44); NEW: the real spec (M >> 7 in bits 27-28)."""
    old = tmp_path / "spec"
    shutil.copytree(SPEC, old)
    path = old / "descriptors" / "instr_desc.yaml"
    text, n = re.subn(r"      - reserved: 24-26\n(?:        .*\n)*?      - name: m\n"
                      r"        bits: 27-28\n        width: 2\n",
                      "      - name: m\n        bits: 24-28\n        width: 5\n",
                      path.read_text())
    assert n == 2
    text = text.replace("dimension: {symbol: M, shift: 7}", "dimension: {symbol: M, shift: 4}")
    # the sm107 layouts extend Tables 43/44 as they are, not CUTLASS's M: leave them (and
    # .kind::ti16, which only they have) out of OLD; validate refuses a variant that is no
    # superset of its baseline
    text = text[:text.index("\nvariants:\n") + 1]
    path.write_text(text)
    mma = old / "instructions" / "tcgen05_mma.yaml"
    mma_text = re.sub(r"      - id: kind-ti16\n(?:        .*\n)*", "", mma.read_text())
    # and the PTX ISA 9.4 descriptor rules on fields only the sm107 layouts have
    # (sparsity_version; k_dim of .kind::f8f6f4)
    for rule in ("sparsity-version-sm107", "fp6-fp4-k64-no-transpose-a",
                 "fp6-fp4-k64-no-transpose-b"):
        mma_text, n = re.subn(rf"      - id: {rule}\n(?:        .*\n)*", "", mma_text)
        assert n == 1, rule
    mma.write_text(mma_text.replace(", ti16]", "]").replace("[i8, ti16]", "i8"))
    res = run_main("diff", str(old), "spec", "--format", "json", "--generated")
    assert res.code == 1, res.err
    data = json.loads(res.out)
    got = {(c["rule"], tuple(c["kinds"])) for c in data["changes"]
           if c["area"] == "descriptors" and not c["rule"].startswith("variant-")}
    for kinds in (("mxf8f6f4",), ("mxf4", "mxf4nvf4")):  # Table 43; Table 44
        for rule_id in ("field-resized", "field-encoding-changed", "values-narrowed",
                        "reserved-added"):
            assert (rule_id, kinds) in got
    assert len(got) == 8
    symbols = {s["symbol"] for s in data["generated"]["symbols"]
               if s["symbol"].startswith("InstrDesc") and "Sm107" not in s["symbol"]
               and "ForTarget" not in s["symbol"]}
    assert symbols == {f"InstrDesc{k}.{s}" for k in ("Mxf8f6f4", "Mxf4", "Mxf4nvf4")
                       for s in ("m", "RESERVED_MASK")}


# -- the policy document ----------------------------------------------------------------------

def test_policy_table_lists_every_rule() -> None:
    doc = (ROOT / "docs" / "diff-policy.md").read_text()
    assert rules_table(rules()) in doc


def test_a_spec_with_too_many_candidate_forms_is_refused_not_enumerated(
        spec_core: Path) -> None:
    """An instruction with 30 independent flags has 2**30 forms: the enumeration stops at
    ptxgen.model.instructions.MAX_FORM_SEARCH steps and validate / diff refuse it at the
    instruction's file:line:col (exit 2) instead of running for hours."""
    path = spec_core / "instructions" / "wgmma.yaml"
    text = path.read_text()
    flags = "".join(f"\n      - {{name: f{i}, text: .f{i}, flag: true, "
                    f"provenance: {{seeds: ['004']}}}}" for i in range(30))
    start = text.index("id: wgmma_fence")
    at = text.index("    qualifiers: []", start)
    path.write_text(text[:at] + "    qualifiers:" + flags + text[at + len("    qualifiers: []"):])
    line = text[:start].count("\n")  # the line of '- name: wgmma.fence.sync.aligned'
    for args in (("validate", "--spec", str(spec_core)), ("diff", str(SPEC), str(spec_core))):
        res = run_main(*args)
        assert res.code == 2, (res.code, res.out, res.err)
        assert "Traceback" not in res.err
        assert f"wgmma.yaml:{line}:" in res.err, res.err
        assert "more than 200000 candidate forms" in res.err, res.err


def test_the_changelog_does_not_depend_on_string_hashing(tmp_path: Path) -> None:
    """Two processes with different hash seeds write the same changelog (operands removed
    going back from 9.0 to 8.6 were listed in set order before; mma_sp.yaml has them)."""
    import os
    import sys

    spec = spec_subset(tmp_path / "spec", ("mma_sp.yaml",), descriptors=False)
    outs = []
    for seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "ptxgen", "diff", "--spec", str(spec),
                               "--ptx-isa", "9.0", "8.6", "--format", "json"],
                              cwd=ROOT, capture_output=True, text=True,
                              check=False, env={**os.environ, "PYTHONHASHSEED": seed})
        assert proc.returncode == 1, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    removed = [c["subject"] for c in json.loads(outs[0])["changes"]
               if c["rule"] == "operand-removed"
               and c["subject"].startswith("mma_sp_ordered_metadata.")]
    assert len(removed) > 1  # the case that was in set order
