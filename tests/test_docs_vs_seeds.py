"""The proof that the spec transcribes the seeds faithfully.

Every table of the spec is rendered back to Markdown (generated/docs) and
compared with each seed that contains it, cell by cell, after normalising
whitespace, dashes, Markdown links and escapes. Where a seed is wrong or the
seeds disagree, the mismatch must be exactly one of EXCEPTIONS, and each names
the spec note that records the decision; rows the seed does not have (unlisted
reserved bits) must name their note too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import seed_tables as st

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "generated" / "docs"
SPEC = ROOT / "spec" / "descriptors"

# (seed, table, bits, column) -> note id. column: index into the row, or "values".
EXCEPTIONS: dict[tuple[str, str, str, object], str] = {
    ("001", "42", "4-5", 5): "t42-f8f6f4-dtype",
    ("000", "44", "23", 4): "t44-mxf4nvf4-scale-type",
    ("003", "44", "23", "values"): "t44-mxf4nvf4-scale-type",
    ("003", "40", "53-60", 2): "t40-fixed-constant-typo",
    ("003", "45", "40-47", 3): "t45-span-wording",
    ("003", "45", "48-55", 3): "t45-span-wording",
    ("004", "wgmma", "29-16", 1): "wg-field-names",
    ("004", "wgmma", "45-32", 1): "wg-field-names",
}


def _notes() -> dict[str, dict[str, object]]:
    notes: dict[str, dict[str, object]] = {}
    for path in SPEC.glob("*.yaml"):
        for note in yaml.safe_load(path.read_text()).get("notes", []):
            notes[note["id"]] = note
    return notes


def _doc(name: str) -> str:
    return (DOCS / f"{name}.md").read_text(encoding="utf-8")


def _collapse(cells: list[str]) -> list[str]:
    out: list[str] = []
    for c in cells:
        if not out or out[-1] != c:
            out.append(c)
    return out


def compare(seed_id: str, table: str, seed: st.SeedTable, rows: list[st.DocRow],
            fixed: int) -> set[tuple[str, str, str, object]]:
    """Mismatching cells, keyed like EXCEPTIONS. Implicit rows must name a note."""
    notes = _notes()
    explicit = []
    for r in rows:
        if r.implicit:
            assert r.implicit in notes, f"row {r.cells[0]} names unknown note {r.implicit}"
            assert seed_id in notes[r.implicit]["seeds"], r.implicit
        else:
            explicit.append([st.norm(c) for c in r.cells])
    assert [r[0] for r in seed.rows] == [r[0] for r in explicit], (
        f"seed {seed_id} table {table}: rows differ")
    bad: set[tuple[str, str, str, object]] = set()
    for srow, drow in zip(seed.rows, explicit, strict=True):
        for i in range(min(fixed, len(srow))):
            if srow[i] != drow[i]:
                bad.add((seed_id, table, srow[0], i))
        if seed.collapsed:
            if srow[fixed:] and srow[fixed:] != _collapse(drow[fixed:]):
                bad.add((seed_id, table, srow[0], "values"))
        else:
            assert len(srow) == len(drow), (seed_id, table, srow, drow)
            for i in range(fixed, len(srow)):
                if srow[i] != drow[i]:
                    bad.add((seed_id, table, srow[0], i))
    return bad


def _expected(seed_id: str, table: str) -> set[tuple[str, str, str, object]]:
    return {k for k in EXCEPTIONS if k[0] == seed_id and k[1] == table}


@pytest.mark.parametrize("table", ["42", "43", "44"])
@pytest.mark.parametrize("seed_id", ["000", "001", "003"])
def test_instruction_descriptor_tables(seed_id: str, table: str) -> None:
    rows = st.doc_table(_doc("instr_desc"), f"Table {table}:")
    if seed_id == "000":
        seed = st.seed000(int(table))
    elif seed_id == "001":
        seed = st.seed001(int(table))
    else:
        seed = st.seed003(f"Table {table} Instruction descriptor")
    assert compare(seed_id, table, seed, rows, 3) == _expected(seed_id, table)


def test_table_40_shared_memory_descriptor() -> None:
    rows = st.doc_table(_doc("smem_desc"), "Table 40:")
    seed = st.seed003("Table 40 Shared memory descriptor layout", fixed=3)
    assert compare("003", "40", seed, rows, 3) == _expected("003", "40")


def test_table_41_swizzle_pattern_start() -> None:
    rows = st.doc_table(_doc("smem_desc"), "Table 41:")
    seed = st.seed003("Table 41 Starting address", fixed=2)
    assert compare("003", "41", seed, rows, 2) == set()


def test_table_45_zero_column_mask_layout() -> None:
    rows = st.doc_table(_doc("zero_column_mask_desc"), "Table 45:")
    seed = st.seed003("Table 45 Zero-Column Mask descriptor layout", fixed=3)
    # Rows with 3 cells continue the description of the row above (rowspan).
    assert compare("003", "45", seed, rows, 4) == _expected("003", "45")


def test_table_45_sub_mask_breakup() -> None:
    rows = st.doc_table(_doc("zero_column_mask_desc"), "Sub-mask breakup by M")
    seed = st.seed003("\nM | Zero-Column Mask breakup", fixed=5)
    assert compare("003", "45b", seed, rows, 5) == set()


def test_table_45_coverage() -> None:
    rows = st.doc_table(_doc("zero_column_mask_desc"), "Coverage of the sub-masks")
    seed = st.seed003("\nSub-mask | M", skip_subheader=True, fixed=4)
    assert compare("003", "45c", seed, rows, 4) == set()


def test_table_45_worked_examples() -> None:
    doc = _doc("zero_column_mask_desc")
    spec = yaml.safe_load((SPEC / "zero_column_mask_desc.yaml").read_text())
    examples = spec["zero_column_mask"]["examples"]
    seeds = st.seed003_examples()
    assert len(seeds) == len(examples) == 4
    for ex, (seed_row, seed_masks) in zip(examples, seeds, strict=True):
        assert ex["seed_row"] == seed_row, ex["title"]
        assert [" ".join(m.split()) for m in ex["masks"]] == seed_masks, ex["title"]
        assert "| " + " | ".join(ex["seed_row"]) + " |" in doc
        # The '-' cells of the seed are fields the example's M does not use.
        for value, cell in zip([ex["fields"].get(f"start_count_{i}", 0) for i in range(3, -1, -1)],
                               seed_row[0].strip("{}").split(", "), strict=True):
            assert cell == "-" or int(cell) == value, ex["title"]
        for value, cell in zip([ex["fields"].get(f"first_span_{i}", 0) for i in range(3, -1, -1)],
                               seed_row[1].strip("{}").split(", "), strict=True):
            assert cell == "-" or int(cell) == value, ex["title"]
        tail = ["non_zero_mask", "skip_span", "use_span", "column_shift"]
        assert [str(ex["fields"].get(f, 0)) for f in tail] == seed_row[2:], ex["title"]


def test_wgmma_descriptor_table() -> None:
    rows = st.doc_table(_doc("wgmma_desc"), "Matrix Descriptor Format")
    seed = st.seed004_wgmma()
    assert compare("004", "wgmma", seed, rows, 2) == _expected("004", "wgmma")


def test_every_exception_names_a_note_about_that_seed() -> None:
    notes = _notes()
    for (seed_id, _table, _bits, _col), note in EXCEPTIONS.items():
        assert note in notes, note
        assert seed_id in notes[note]["seeds"], (note, seed_id)
