"""Validation and model of the instruction side (spec/targets.yaml, spec/instructions).

Each broken-spec test edits a private copy of spec/ and checks that
``ptxgen validate`` reports the problem at the right file:line. The model
tests restate facts from the seeds (or from the ptxas notes of the spec)
and check the derived forms and support matrices against them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORE_INSTRUCTIONS, SPEC
from ptxgen import pipeline
from ptxgen.errors import SpecError
from ptxgen.model.instructions import InstructionSet, lookup, vkey


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

def test_the_core_spec_is_valid(spec_core: Path) -> None:
    """The broken-spec tests break a copy of the core of the spec (conftest.spec_core):
    unbroken, it validates, so each test's diagnostic is the one its edit causes."""
    docs = pipeline.load_documents(spec_core, use_cache=False)
    assert sorted(d.rel for d in docs if "/instructions/" in d.rel) == [
        f"spec/instructions/{n}" for n in CORE_INSTRUCTIONS]


def test_unknown_name_in_a_condition(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/tcgen05_mma.yaml", "when: {ashift: true}\n"
                  "        require: {a: a_tmem}", "when: {ashfit: true}\n"
                  "        require: {a: a_tmem}")
    errs = _errors(spec_core)
    assert _has(errs, "tcgen05_mma.yaml", line, "'ashfit' is neither a qualifier nor an operand")


def test_value_outside_the_domain(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/tcgen05_mma.yaml",
                  "when: {kind: i8}\n        targets:", "when: {kind: s8}\n        targets:")
    assert _has(_errors(spec_core), "tcgen05_mma.yaml", line, "s8 is not a value of kind")


def test_unknown_target_selector(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/wgmma.yaml",
                  "targets: [sm_90a]\n        since: \"8.0\"\n"
                  "        provenance:\n          seeds: [\"004\"]",
                  "targets: [sm_90f]\n        since: \"8.0\"\n"
                  "        provenance:\n          seeds: [\"004\"]")
    assert _has(_errors(spec_core), "wgmma.yaml", line, "target selector 'sm_90f'")


def test_rule_without_seed_needs_ptxas_evidence(spec_core: Path) -> None:
    old = ("provenance: {seeds: [], ptxas: \"Illegal modifier '.cta_group::2' for instruction "
           "'tcgen05.mma.ws'\"}")
    line = _break(spec_core, "instructions/tcgen05_mma.yaml", old, "provenance: {seeds: []}")
    assert _has(_errors(spec_core), "tcgen05_mma.yaml", line, "needs its ptxas evidence")


def test_version_outside_the_matrix(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/tcgen05_mma.yaml", 'since: "8.7"', 'since: "8.9"')
    assert _has(_errors(spec_core), "tcgen05_mma.yaml", line, "8.9 is not in ptx_isa_versions")


def test_form_supported_nowhere(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/tcgen05_mma.yaml",
                  "targets: [sm_100a, sm_101a, sm_110a]", "targets: [sm_120a]")
    errs = _errors(spec_core)
    assert any(f == "tcgen05_mma.yaml" and "supported on no target" in m for f, _, m in errs)
    assert line > 0


def test_derived_qualifier_must_be_a_function(spec_core: Path) -> None:
    _break(spec_core, "instructions/wgmma.yaml", "match: {k: 8, atype: tf32",
           "match: {k: [8, 16], atype: tf32")
    errs = _errors(spec_core)
    assert any("k is not fixed by atype" in m for _, _, m in errs), errs


def test_example_validity_is_checked(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/tcgen05_mma.yaml",
                  "collector::a:fill [taddr2], [taddr1], bdesc, [tmem_spmeta1], idesc, "
                  "[tmem_scaleA], [tmem_scaleB], p;\"\n        valid: false",
                  "collector::a:fill [taddr2], [taddr1], bdesc, [tmem_spmeta1], idesc, "
                  "[tmem_scaleA], [tmem_scaleB], p;\"\n        valid: true")
    assert _has(_errors(spec_core), "tcgen05_mma.yaml", line + 1, "is not a valid form")


def test_duplicate_wrapper_name(spec_core: Path) -> None:
    line = _break(spec_core, "instructions/ldmatrix.yaml", "{name: stmatrix, when: {}}",
                  "{name: ldmatrix, when: {}}")
    assert _has(_errors(spec_core), "ldmatrix.yaml", line, "wrapper 'ldmatrix' is also defined")


def test_targets_spec_checks(spec_core: Path) -> None:
    line = _break(spec_core, "targets.yaml", "ptxas_arch: sm_110a,", "ptxas_arch: sm_111a,")
    assert _has(_errors(spec_core), "targets.yaml", line, "unknown target 'sm_111a'")


def test_family_specific_target_needs_a_family(spec_core: Path) -> None:
    line = _break(spec_core, "targets.yaml", "members: [120, 121]", "members: [120]")
    errs = _errors(spec_core)
    assert any(f == "targets.yaml" and "sm_121f is family-specific" in m for f, _, m in errs)
    assert line > 0


# -- the model ------------------------------------------------------------------------------

def test_matrix_versions_and_targets(iset: InstructionSet) -> None:
    t = iset.targets
    # from sm_75's first version (6.3: "PTX .version 6.2 does not support .target sm_75",
    # ptxas 13.0 and 13.5) to CUDA 13.5's PTX ISA 9.5
    assert t.versions[0] == "6.3" and t.newest == "9.5"
    assert t.get("sm_75").since == "6.3"
    assert len(t.targets) == 29
    # Seed 002: sm_101a renamed to sm_110a from PTX ISA 9.0.
    assert t.get("sm_101a").exists_at("8.8") and not t.get("sm_101a").exists_at("9.0")
    # sm_107 (CUDA 13.4, PTX ISA 9.4) is in the sm_100 family (ptxas 13.5 compiles
    # .target sm_100f PTX for -arch=sm_107f)
    assert t.select("sm_100f") == {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_107a",
                                   "sm_107f"}
    assert t.select("sm_101f") == {"sm_101a", "sm_101f", "sm_110a", "sm_110f"}
    assert t.select("sm_120f") == {"sm_120a", "sm_120f", "sm_121a", "sm_121f"}
    # CUDA 13.0's matrix: the 159 pairs up to 9.0 (sm_101* not at 9.0, sm_88 from 7.3 as
    # ptxas 13.0 accepts it) plus sm_75 at 6.3, 6.4 and 6.5.
    t13 = t.for_toolkit("13.0")
    assert t13.newest == "9.0" and len(t13.targets) == 26 and len(t13.pairs()) == 162
    # The ISA's: sm_88 only from 9.0 (15 pairs fewer), 9.1-9.5 on the 23 targets of 9.0
    # (115), sm_107 / sm_107a / sm_107f at 9.4 and 9.5 (6).
    assert len(t.pairs()) == 162 - 15 + 115 + 6 == 268


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
    # 198 forms of seed 004 and the 9.0 kinds, 16 .f64 forms with an explicit rounding (4
    # shapes x .rn/.rz/.rm/.rp, PTX ISA 9.4 9.7.16.5.14) and the 9.1 .kind::mxf4nvf4
    # .scale_vec::4X .ue8m0 form
    assert len(ins.forms) == 198 + 4 * 4 + 1
    assert len([f for f in ins.forms if f.opcode.endswith((".rn", ".rz", ".rm", ".rp"))]) == 16


def test_support_is_monotonic_in_the_version(iset: InstructionSet) -> None:
    t = iset.targets
    for ins in iset.instructions:
        for f in ins.forms[::7]:
            for target, first in f.support.matrix(t).items():
                later = [v for v in t.versions if vkey(v) >= vkey(first)]
                assert all(f.support.supported(t, target, v) == t.get(target).exists_at(v)
                           for v in later)


# -- sparse MMA (seed 004 section 5; the rest from the ptxas notes of mma_sp.yaml / wgmma) --

# (atype, shape) -> A and B registers, from note mma-sp-shapes (ptxas: "Argument vector size
# mismatch for instruction 'Sparse mma'" for any other count).
SPARSE_SHAPES = {
    ("f16", "m16n8k16"): 2, ("f16", "m16n8k32"): 4, ("bf16", "m16n8k16"): 2,
    ("bf16", "m16n8k32"): 4, ("tf32", "m16n8k8"): 2, ("tf32", "m16n8k16"): 4,
    ("e4m3", "m16n8k64"): 4, ("s8", "m16n8k32"): 2, ("s8", "m16n8k64"): 4,
    ("u4", "m16n8k64"): 2, ("u4", "m16n8k128"): 4,
}


@pytest.mark.parametrize("ident", ["mma_sp", "mma_sp_ordered_metadata"])
def test_mma_sp_shapes_and_registers(iset: InstructionSet, ident: str) -> None:
    ins = iset.get(ident)
    plain = [f for f in ins.forms if f.params.get("kind", "none") == "none"]
    pairs = {(f.params["atype"], f.params["shape"]) for f in plain}
    assert {p for p in pairs if p[0] in ("f16", "bf16", "tf32", "e4m3", "s8", "u4")} == set(
        SPARSE_SHAPES)
    for f in plain:
        regs = SPARSE_SHAPES.get((f.params["atype"], f.params["shape"]))
        uses = {u.name: u for u in f.operands}
        if regs is not None:
            assert uses["a"].count == uses["b"].count == regs, f.key
        assert f.params["alayout"] == "row" and f.params["blayout"] == "col"
        assert f.params["dtype"] == f.params["ctype"]
        assert [u.name for u in f.operands][-2:] == ["sp_meta", "sp_sel"]


def test_sparse_selector_ranges(iset: InstructionSet) -> None:
    # Seed 004 says 0..3; ptxas narrows it per shape and type (note mma-sp-selector).
    expected = {
        "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32": (0, 1, 2, 3),
        "mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32": (0, 1, 2, 3),
        "mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32": (0, 1),
        "mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32": (0, 1),
        "mma.sp.sync.aligned.m16n8k64.row.col.s32.u4.s4.s32": (0, 1),
        "mma.sp.sync.aligned.m16n8k64.row.col.s32.u8.s8.s32": (0,),
        "mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32": (0,),
        "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32": (0,),
        "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32":
            (0,),
        "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16": (0, 1),
        "wgmma.mma_async.sp.sync.aligned.m64n64k16.f32.tf32.tf32": (0, 1),
        "wgmma.mma_async.sp.sync.aligned.m64n64k64.f32.e4m3.e4m3": (0,),
        "wgmma.mma_async.sp.sync.aligned.m64n64k64.s32.s8.u8": (0,),
    }
    for opcode, values in expected.items():
        forms = lookup(iset, opcode).forms
        assert forms, opcode
        for f in forms:
            sel = next(u for u in f.operands if u.name == "sp_sel")
            assert tuple(sel.values or ()) == values, opcode


def test_wgmma_sp_k_and_n(iset: InstructionSet) -> None:
    # Seed 004: f16/bf16 m64nNk32, e4m3/e5m2 m64nNk64; ptxas: tf32 k16, u8/s8 k64, no .b1.
    ins = iset.get("wgmma_mma_async_sp")
    k = {f.params["atype"]: f.params["k"] for f in ins.forms}
    assert k == {"f16": "32", "bf16": "32", "tf32": "16", "e4m3": "64", "e5m2": "64",
                 "u8": "64", "s8": "64"}
    ns = {a: sorted({int(f.params["n"]) for f in ins.forms if f.params["atype"] == a})
          for a in ("f16", "s8")}
    assert ns["f16"] == list(range(8, 257, 8))
    assert ns["s8"] == [8, 16, 24, *range(32, 257, 16)]
    # Every sparse form has the same operand variants and immediates as its dense twin.
    dense = iset.get("wgmma_mma_async")
    for f in ins.forms[::37]:
        twin = dict(f.params)
        twin["k"] = str(int(twin["k"]) // 2)
        d = next(g for g in dense.forms if g.params == {**twin, "bitop": "none"})
        names = [u.name for u in f.operands]
        assert names == [u.name for u in d.operands][:3] + ["sp_meta", "sp_sel"] + [
            u.name for u in d.operands][3:], f.key


def test_sparse_support_from_ptxas(iset: InstructionSet) -> None:
    t = iset.targets

    def first(opcode: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in lookup(iset, opcode).forms:
            out.update(f.support.matrix(t))
        return out

    sp = first("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert "sm_75" not in sp and sp["sm_80"] == "7.1" and sp["sm_90"] == "7.8"
    om = first("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert om["sm_80"] == om["sm_90a"] == "8.5"
    fp8 = first("mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32")
    assert "sm_80" not in fp8 and fp8["sm_89"] == "8.4"
    f8f6f4 = first("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4"
                   ".f32.e4m3.e5m2.f32")
    assert set(f8f6f4) == t.select("sm_100f") | t.select("sm_101f") | t.select("sm_120f")
    mxf4 = first("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.kind::mxf4"
                 ".block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0")
    assert mxf4 == {"sm_120a": "8.7", "sm_121a": "8.8"}
    wg = first("wgmma.mma_async.sp.sync.aligned.m64n256k64.s32.u8.s8")
    assert wg == {"sm_90a": "8.4"}
    assert first("wgmma.mma_async.sp.sync.aligned.m64n256k64.s32.u8.u8") == {"sm_90a": "8.2"}
