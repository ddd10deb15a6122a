"""Validation and model of the instruction side (spec/targets.yaml, spec/instructions).

Each broken-spec test edits a private copy of spec/ and checks that
``ptxgen validate`` reports the problem at the right file:line. The model
tests restate facts from the seeds (or from the ptxas notes of the spec)
and check the derived forms and support matrices against them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SPEC
from ptxgen import pipeline
from ptxgen.errors import SpecError
from ptxgen.instructions import InstructionSet, lookup, vkey


@pytest.fixture(scope="module")
def iset() -> InstructionSet:
    spec = pipeline.load_model(SPEC)
    assert spec.instructions is not None
    return spec.instructions


def _break(spec_dir: Path, rel: str, old: str, new: str) -> int:
    """Replace ``old`` by ``new`` in a spec file; return the 1-based line of the edit."""
    path = spec_dir / rel
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {rel}"
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def _errors(spec_dir: Path) -> list[tuple[str, int, str]]:
    with pytest.raises(SpecError) as info:
        pipeline.load_model(spec_dir)
    return [(Path(d.file).name, d.line, d.message) for d in info.value.diagnostics]


def _has(errors: list[tuple[str, int, str]], file: str, line: int, words: str) -> bool:
    return any(f == file and ln == line and words in msg for f, ln, msg in errors)


# -- validation ---------------------------------------------------------------------------

def test_unknown_name_in_a_condition(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/tcgen05_mma.yaml", "when: {ashift: true}\n"
                  "        require: {a: a_tmem}", "when: {ashfit: true}\n"
                  "        require: {a: a_tmem}")
    errs = _errors(spec_copy)
    assert _has(errs, "tcgen05_mma.yaml", line, "'ashfit' is neither a qualifier nor an operand")


def test_value_outside_the_domain(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/tcgen05_mma.yaml",
                  "when: {kind: i8}\n        targets:", "when: {kind: s8}\n        targets:")
    assert _has(_errors(spec_copy), "tcgen05_mma.yaml", line, "s8 is not a value of kind")


def test_unknown_target_selector(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/wgmma.yaml",
                  "targets: [sm_90a]\n        since: \"8.0\"\n"
                  "        provenance:\n          seeds: [\"004\"]",
                  "targets: [sm_90f]\n        since: \"8.0\"\n"
                  "        provenance:\n          seeds: [\"004\"]")
    assert _has(_errors(spec_copy), "wgmma.yaml", line, "target selector 'sm_90f'")


def test_rule_without_seed_needs_ptxas_evidence(spec_copy: Path) -> None:
    old = ("provenance: {seeds: [], ptxas: \"Illegal modifier '.cta_group::2' for instruction "
           "'tcgen05.mma.ws'\"}")
    line = _break(spec_copy, "instructions/tcgen05_mma.yaml", old, "provenance: {seeds: []}")
    assert _has(_errors(spec_copy), "tcgen05_mma.yaml", line, "needs its ptxas evidence")


def test_version_outside_the_matrix(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/tcgen05_mma.yaml", 'since: "8.7"', 'since: "8.9"')
    assert _has(_errors(spec_copy), "tcgen05_mma.yaml", line, "8.9 is not in ptx_isa_versions")


def test_form_supported_nowhere(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/tcgen05_mma.yaml",
                  "targets: [sm_100a, sm_101a, sm_110a]", "targets: [sm_120a]")
    errs = _errors(spec_copy)
    assert any(f == "tcgen05_mma.yaml" and "supported on no target" in m for f, _, m in errs)
    assert line > 0


def test_derived_qualifier_must_be_a_function(spec_copy: Path) -> None:
    _break(spec_copy, "instructions/wgmma.yaml", "match: {k: 8, atype: tf32",
           "match: {k: [8, 16], atype: tf32")
    errs = _errors(spec_copy)
    assert any("k is not fixed by atype" in m for _, _, m in errs), errs


def test_example_validity_is_checked(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/tcgen05_mma.yaml",
                  "collector::a:fill [taddr2], [taddr1], bdesc, [tmem_spmeta1], idesc, "
                  "[tmem_scaleA], [tmem_scaleB], p;\"\n        valid: false",
                  "collector::a:fill [taddr2], [taddr1], bdesc, [tmem_spmeta1], idesc, "
                  "[tmem_scaleA], [tmem_scaleB], p;\"\n        valid: true")
    assert _has(_errors(spec_copy), "tcgen05_mma.yaml", line + 1, "is not a valid form")


def test_duplicate_wrapper_name(spec_copy: Path) -> None:
    line = _break(spec_copy, "instructions/ldmatrix.yaml", "{name: stmatrix, when: {}}",
                  "{name: ldmatrix, when: {}}")
    assert _has(_errors(spec_copy), "ldmatrix.yaml", line, "wrapper 'ldmatrix' is also defined")


def test_targets_spec_checks(spec_copy: Path) -> None:
    line = _break(spec_copy, "targets.yaml", "ptxas_arch: sm_110a,", "ptxas_arch: sm_111a,")
    assert _has(_errors(spec_copy), "targets.yaml", line, "unknown target 'sm_111a'")


def test_family_specific_target_needs_a_family(spec_copy: Path) -> None:
    line = _break(spec_copy, "targets.yaml", "members: [120, 121]", "members: [120]")
    errs = _errors(spec_copy)
    assert any(f == "targets.yaml" and "sm_121f is family-specific" in m for f, _, m in errs)
    assert line > 0


# -- the model ------------------------------------------------------------------------------

def test_matrix_versions_and_targets(iset: InstructionSet) -> None:
    t = iset.targets
    assert t.versions[0] == "7.0" and t.newest == "9.0"
    assert len(t.targets) == 26
    # Seed 002: sm_101a renamed to sm_110a from PTX ISA 9.0.
    assert t.get("sm_101a").exists_at("8.8") and not t.get("sm_101a").exists_at("9.0")
    assert t.select("sm_100f") == {"sm_100a", "sm_100f", "sm_103a", "sm_103f"}
    assert t.select("sm_101f") == {"sm_101a", "sm_101f", "sm_110a", "sm_110f"}
    assert t.select("sm_120f") == {"sm_120a", "sm_120f", "sm_121a", "sm_121f"}
    # 162 pairs ptxas accepts, less sm_101 / sm_101a / sm_101f at 9.0 (renamed).
    assert len(t.pairs()) == 159


def test_every_seed_002_syntax_block_has_forms(iset: InstructionSet) -> None:
    ins = iset.get("tcgen05_mma")
    for _, block, cond in ins.seed_syntax:
        assert any(cond(f.params) for f in ins.forms), block


def test_seed_002_disable_output_lane_sizes(iset: InstructionSet) -> None:
    # "Size of the vector disable-output-lane": ::1 -> 4, ::2 -> 8.
    for cta, size in (("1", 4), ("2", 8)):
        found = lookup(iset, f"tcgen05.mma.sp.cta_group::{cta}.kind::f16")
        dol = [u for f in found.forms for u in f.operands if u.name == "disable_output_lane"]
        assert dol and {u.count for u in dol} == {size}


def test_scale_input_d_range_and_kinds(iset: InstructionSet) -> None:
    # Seed 002: scale-input-d in [0, 15], only for .kind::tf32 and .kind::f16.
    for kind, allowed in (("f16", True), ("tf32", True), ("f8f6f4", False), ("i8", False)):
        forms = lookup(iset, f"tcgen05.mma.sp.cta_group::1.kind::{kind}").forms
        sid = [u for f in forms for u in f.operands if u.name == "scale_input_d"]
        assert bool(sid) == allowed, kind
        if sid:
            assert sid[0].values == tuple(range(16))


def test_wgmma_n_values(iset: InstructionSet) -> None:
    # Seed 004: N from 8 to 256 in steps of 8; ptxas: 8, 16, 24 then steps of 16 for ints.
    ins = iset.get("wgmma_mma_async")
    ns = {a: sorted({int(f.params["n"]) for f in ins.forms if f.params["atype"] == a})
          for a in ("f16", "s8", "b1")}
    assert ns["f16"] == list(range(8, 257, 8))
    assert ns["s8"] == ns["b1"] == [8, 16, 24, *range(32, 257, 16)]


def test_mma_sync_counts(iset: InstructionSet) -> None:
    # Every shape x type row of seed 004 yields forms; register counts of m16n8k16 f16.
    ins = iset.get("mma_sync")
    f = lookup(iset, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16").forms[0]
    assert [(u.name, u.type, u.count) for u in f.operands] == [
        ("d", "b32", 2), ("a", "b32", 4), ("b", "b32", 2), ("c", "b32", 2)]
    assert len(ins.forms) == 198


def test_support_is_monotonic_in_the_version(iset: InstructionSet) -> None:
    t = iset.targets
    for ins in iset.instructions:
        for f in ins.forms[::7]:
            for target, first in f.support.matrix(t).items():
                later = [v for v in t.versions if vkey(v) >= vkey(first)]
                assert all(f.support.supported(t, target, v) == t.get(target).exists_at(v)
                           for v in later)
