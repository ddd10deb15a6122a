"""Stage 2: schema and semantic checks, every problem as file:line:col, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from ptxgen.errors import SpecError
from ptxgen.pipeline import load_model

INSTR = "descriptors/instr_desc.yaml"
SMEM = "descriptors/smem_desc.yaml"


def edit(spec: Path, rel: str, old: str, new: str, count: int = 1) -> None:
    path = spec / rel
    text = path.read_text()
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count))


def errors(spec: Path) -> list[str]:
    with pytest.raises(SpecError) as exc:
        load_model(spec)
    return [str(d) for d in exc.value.diagnostics]


def only(spec: Path, needle: str) -> str:
    found = [e for e in errors(spec) if needle in e]
    assert len(found) == 1, errors(spec)
    return found[0]


def line_of(spec: Path, rel: str, text: str) -> int:
    lines = (spec / rel).read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if text in ln)


def test_real_spec_is_valid() -> None:
    spec = load_model(Path(__file__).parent.parent / "spec")
    assert len(spec.layouts) == 12  # + tmem_addr (issue 16), spcompress_desc (issue 25)


def test_overlap_and_width(spec_core: Path) -> None:
    edit(spec_core, INSTR, "bits: 4-5\n        width: 2", "bits: 3-5\n        width: 2")
    errs = errors(spec_core)
    line = line_of(spec_core, INSTR, "bits: 3-5")
    # The overlap names the field it overlaps (issue 12), not "entry #2".
    assert any(e.endswith(f"{INSTR}:{line}:15: bit 3 overlaps field 'saturate' (bits 3)")
               for e in errs), errs
    assert any(e.endswith(f"{INSTR}:{line + 1}:16: width 2 does not match bits 3-5 (3 bits)")
               for e in errs), errs


def test_gap_is_reported(spec_core: Path) -> None:
    edit(spec_core, INSTR, "      - reserved: 23\n        width: 1\n", "")
    err = only(spec_core, "not accounted for")
    assert err.endswith("bits not accounted for (every bit must be a field, reserved or "
                        "fixed): 23")


def test_range_outside_word_and_reversed(spec_core: Path) -> None:
    edit(spec_core, SMEM, "bits: 61-63", "bits: 61-64")
    edit(spec_core, SMEM, "bits: 49-51", "bits: 51-49")
    errs = errors(spec_core)
    assert any("bits 61-64 lie outside the 64-bit word (bits 0-63)" in e for e in errs), errs
    assert any("bit range '51-49' must be written LSB-MSB" in e for e in errs), errs


def test_value_must_fit(spec_core: Path) -> None:
    edit(spec_core, INSTR, "{name: s32, value: 2, label: S32}", "{name: s32, value: 4, label: S32}")
    err = only(spec_core, "does not fit")
    line = line_of(spec_core, INSTR, "name: s32, value: 4")
    assert f"{INSTR}:{line}:" in err
    assert err.endswith("value 4 does not fit in 2 bit(s) of field 'dtype'")


@pytest.mark.parametrize(("name", "why"), [
    ("class", "is a Python keyword"),
    ("int", "is a C++ keyword"),
    ("assert", "is a Python keyword"),
])
def test_keyword_names_are_refused(spec_core: Path, name: str, why: str) -> None:
    edit(spec_core, SMEM, "name: lbo_mode", f"name: {name}")
    assert only(spec_core, "field name").endswith(f"field name: '{name}' {why}")


def test_duplicate_field_and_value_names(spec_core: Path) -> None:
    edit(spec_core, SMEM, "name: lbo_mode", "name: base_offset")
    edit(spec_core, SMEM, "{name: 64b, value: 4", "{name: 32b, value: 4")
    errs = errors(spec_core)
    assert any("duplicate field name 'base_offset'" in e for e in errs), errs
    assert any("duplicate value name '32b'" in e for e in errs), errs


def test_unknown_key_lists_allowed_keys(spec_core: Path) -> None:
    edit(spec_core, SMEM, "    description: Matrix base offset",
         "    descripton: Matrix base offset")
    errs = errors(spec_core)
    line = line_of(spec_core, SMEM, "descripton:")
    hit = [e for e in errs if f"{SMEM}:{line}:5: unknown key 'descripton'" in e]
    assert hit, errs
    assert "allowed keys: bits, description," in hit[0]


def test_unknown_note_and_kind(spec_core: Path) -> None:
    edit(spec_core, INSTR, "note: t42-f8f6f4-dtype", "note: no-such-note")
    edit(spec_core, INSTR, "          tf32: {na: 0}", "          tf33: {na: 0}")
    errs = errors(spec_core)
    assert any("note 'no-such-note' is not defined" in e for e in errs), errs
    assert any("kind 'tf33' is not a kind of this layout" in e for e in errs), errs


def test_missing_modeline(spec_core: Path) -> None:
    edit(spec_core, SMEM, "# yaml-language-server: $schema=../schema/descriptor.schema.json\n", "")
    assert only(spec_core, "modeline").endswith(":1:1: missing '# yaml-language-server: "
                                                "$schema=...' modeline naming the JSON Schema "
                                                "of this file")


def test_cli_reports_all_errors_of_all_files_and_writes_nothing(spec_core: Path,
                                                                tmp_path: Path) -> None:
    edit(spec_core, SMEM, "name: lbo_mode", "name: class")
    edit(spec_core, INSTR, "      - reserved: 23\n        width: 1\n", "")
    edit(spec_core, "descriptors/wgmma_desc.yaml", "word_bits: 64", "word_bits: 64\nword_bits: 32")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("old output")  # a previous output (its manifest lists it)
    from ptxgen import manifest

    (out / manifest.NAME).write_bytes(manifest.build({"keep.txt": b"old output"}, "digest"))
    res = run_cli("generate", "--spec", str(spec_core), "--out", str(out))
    assert res.code == 2
    assert res.out == ""
    lines = res.err.strip().splitlines()
    assert len(lines) == 4, res.err
    assert all(ln.split(":")[1].isdigit() and ln.split(":")[2].isdigit() for ln in lines[:3])
    assert "duplicate key 'word_bits'" in res.err
    assert "'class' is a Python keyword" in res.err
    assert "not accounted for" in res.err
    assert lines[-1] == "ptxgen: 3 error(s); nothing written"
    assert sorted(p.name for p in out.iterdir()) == [manifest.NAME, "keep.txt"]


def test_validate_json(spec_core: Path) -> None:
    edit(spec_core, SMEM, "name: lbo_mode", "name: class")
    res = run_cli("validate", "--spec", str(spec_core), "--json")
    assert res.code == 2
    import json

    payload = json.loads(res.out)
    assert payload["ok"] is False and payload["exit_code"] == 2
    assert payload["error"]["message"] == "1 error(s); nothing written"
    (err,) = payload["error"]["diagnostics"]
    assert err["file"].endswith(SMEM) and err["line"] > 1 and err["col"] > 1
    ok = run_cli("validate", "--json")
    assert ok.code == 0 and json.loads(ok.out)["ok"] is True
