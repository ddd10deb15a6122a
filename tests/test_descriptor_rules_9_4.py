"""Issue 25: the PTX ISA 9.4 document's target-dependent rules on the instruction
descriptor (``descriptor_rules`` with ``fields`` conditions and ``targets``), enforced
wherever a descriptor is built or checked: ``descriptor_problems`` (Python), the
descriptor classes' ``problems(target)``, the constexpr C++ checks of
``descriptor_rules.hpp`` (g++), and ``ptxgen encode`` / ``decode`` with ``--target``
(one-line errors naming the field and the target; ``encode`` writes sparsity version
v1 for a sparse .kind::mxf4nvf4 word on sm_107a).

Oracles: the PTX ISA 9.4 document (9.7.18.4.2.1, the Target ISA Note of the instruction
descriptor; 9.7.18.10.1 Table 62; 9.7.18.10.7 Table 69 and its Target ISA Note), read
from ../shared/ptx-isa-9.4 where it is at hand; the CuTe DSL 4.8.1 descriptor class
Tcgen05MxOmmaInstrDesc's word for a sparse sm107 descriptor with sparsity version 1
(tests/fixtures/dsl/descriptor_words.jsonl), which ptxgen's encoder must reproduce; g++
for the C++ checks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_idesc_targets import cpp_results

from ptxgen.isa import InstrDescMxf4nvf4, InstrDescSm107F8f6f4, InstrDescSm107Mxf4nvf4, ptx
from ptxgen.isa.ptx import PtxFormError, descriptor_problems, word_problems

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT.parent / "shared" / "ptx-isa-9.4" / "9-instruction-set"
FACTS = ROOT / "tests" / "fixtures" / "dsl" / "descriptor_words.jsonl"
ISET = ptx.instruction_set()
INS = ISET.get("tcgen05_mma")
SP = "tcgen05.mma.sp.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
MMA_TARGETS = [t for t in ISET.targets.names if t in INS.operand_targets("idesc")]
SM107 = {"sm_107a", "sm_107f"}


def sparse_word(version: int) -> int:
    return InstrDescSm107Mxf4nvf4(sparsity=1, atype=1, btype=1, n=256, m=128,
                                  scale_type=0, sparsity_version=version).encode()


def ids(problems: list[str]) -> list[str]:
    return [re.findall(r"\[([\w.-]+)\]$", p)[0] for p in problems]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ptxgen", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)


def doc_section(name: str) -> str:
    files = sorted(DOC.glob(f"{name}*.md")) if DOC.is_dir() else []
    if not files:
        pytest.skip(f"the PTX ISA 9.4 document ({DOC}) is not at hand")
    return files[0].read_text(encoding="utf-8")


# -- the document --------------------------------------------------------------------------

def test_the_document_gives_v1_to_sm_107a_and_v0_to_the_others() -> None:
    text = doc_section("9.7.18.4-")
    note = text[text.index("Target ISA Note", text.index("Instruction descriptor")):]
    line = next(ln for ln in note.splitlines() if "sparsity version" in ln)
    v0, _, v1 = line.partition("to `v1`")
    assert set(re.findall(r"`(sm_\w+)`", v0)) == {"sm_100a", "sm_103a", "sm_110a"}
    assert set(re.findall(r"`(sm_\w+)`", v1)) == {"sm_107a"}
    (rule,) = [r for r in INS.descriptor_rules if r.id == "sparsity-version-sm107"]
    assert rule.targets == frozenset(SM107) and rule.require == (("sparsity_version", ("1",)),)


def test_the_document_gives_ue4m3_with_block32_to_sm_107f() -> None:
    text = doc_section("9.7.18.10-")
    assert re.search(r"UE4M3` with scale_vectorsize `\.block32` requires target architecture "
                     r"`sm_107f`", text)
    (rule,) = [r for r in INS.descriptor_rules if r.id == "ue4m3-block32-sm107"]
    assert rule.except_selectors == ("sm_107f",)


# -- the sparsity version (Table 53 bit 12) --------------------------------------------------

def test_dsl_class_writes_what_ptxgen_encodes_for_a_sparse_sm107_word() -> None:
    """The DSL's Tcgen05MxOmmaInstrDesc word for a sparse descriptor with sparsity version
    1 (N = 8, M = 128, scale ids 2): ptxgen's sm107 class encodes the same word, and
    ``encode --target sm_107a`` writes it with the version left out."""
    rec = next(json.loads(ln) for ln in FACTS.read_text().splitlines()
               if '"Tcgen05MxOmmaInstrDesc"' in ln and json.loads(ln)["args"]["sparse_flag"] == 1
               and json.loads(ln)["args"]["sparsity_version"] == 1)
    a = rec["args"]
    fields = dict(sparsity=1, atype=1, btype=1, n=a["n_dim"], m=a["m_dim"],
                  scale_a_id=a["a_sf_id"], scale_b_id=a["b_sf_id"], scale_type=a["scale_format"],
                  negate_a=a["a_negate"], negate_b=a["b_negate"],
                  scale_a_layout=a["a_sf_layout"])
    assert InstrDescSm107Mxf4nvf4(**fields, sparsity_version=1).encode() == int(rec["word"], 16)
    args = [f"{k}={v}" for k, v in fields.items()]
    proc = cli("encode", "instr_desc", "--kind", "mxf4nvf4", "--target", "sm_107a", *args)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout, 16) == int(rec["word"], 16)


def test_encode_writes_v1_on_sm_107a_and_refuses_v0() -> None:
    base = ["encode", "instr_desc", "--kind", "mxf4nvf4", "m=128", "n=256", "atype=e2m1",
            "btype=e2m1", "scale_type=ue8m0"]
    sparse = cli(*base, "--target", "sm_107a", "sparsity=sparse")
    assert sparse.returncode == 0 and int(sparse.stdout, 16) == 0x08c01484
    dense = cli(*base, "--target", "sm_107a")  # dense words keep v0 (bit 12 clear)
    assert dense.returncode == 0 and int(dense.stdout, 16) == 0x08c00480
    old = cli(*base, "--target", "sm_100a", "sparsity=sparse")  # bit 12 reserved there
    assert old.returncode == 0 and int(old.stdout, 16) == 0x08c00484
    bad = cli(*base, "--target", "sm_107a", "sparsity=sparse", "sparsity_version=0")
    assert bad.returncode == 2 and bad.stdout == ""
    assert len(bad.stderr.splitlines()) == 1
    assert bad.stderr.startswith("ptxgen: error: instr_desc --kind mxf4nvf4 (sm107 layout): "
                                 "sparsity_version: 0 is not allowed on sm_107a: ")
    assert bad.stderr.rstrip().endswith("[sparsity-version-sm107]")


def test_decode_with_a_target_refuses_v0_in_a_sparse_word() -> None:
    word = f"{sparse_word(0):#x}"
    proc = cli("decode", "instr_desc", "--kind", "mxf4nvf4", "--target", "sm_107f", word)
    assert proc.returncode == 2 and "sparsity_version: 0 is not allowed on sm_107f" in (
        proc.stderr) and len(proc.stderr.splitlines()) == 1
    ok = cli("decode", "instr_desc", "--kind", "mxf4nvf4", "--target", "sm_107f",
             f"{sparse_word(1):#x}")
    assert ok.returncode == 0 and "sparsity_version=1" in ok.stdout


def test_python_checks_by_target() -> None:
    """descriptor_problems and the class's problems(): v0 in a sparse word breaks the rule
    on sm_107a / sm_107f only; v1 never; the dense forms' words are not concerned."""
    for target in MMA_TARGETS:
        got = descriptor_problems(SP, target=target, idesc=sparse_word(0))
        if target in SM107:
            assert ids(got) == ["sparsity-version-sm107"], (target, got)
            assert descriptor_problems(SP, target=target, idesc=sparse_word(1)) == []
        else:  # bit 12 is reserved in Table 44: v0 is the only word there
            assert got == [], (target, got)
    assert descriptor_problems(SP, idesc=sparse_word(0)) == []  # no target: not checked
    desc = InstrDescSm107Mxf4nvf4.decode(sparse_word(0))
    assert ids(desc.problems("sm_107a")) == ["sparsity-version-sm107"]
    assert desc.problems("sm_100a") == [] and desc.replace(sparsity_version=1).problems(
        "sm_107a") == []
    with pytest.raises(PtxFormError, match="unknown target 'sm107a'"):
        word_problems(desc, "sm107a")


def test_smem_lbo_mode_through_encode_and_the_class() -> None:
    """The sm_103a-only absolute leading dimension mode (Table 49 bit 52) everywhere a shared
    memory descriptor is built: encode --target and SmemDesc.problems()."""
    args = ["encode", "smem_desc", "start_address=1024", "lbo_mode=1", "swizzle=128b"]
    assert cli(*args, "--target", "sm_103a").returncode == 0
    bad = cli(*args, "--target", "sm_100a")
    assert bad.returncode == 2 and bad.stderr.startswith(
        "ptxgen: error: smem_desc: lbo_mode: 1 is not allowed on sm_100a: ")
    from ptxgen.isa.smem_desc import SmemDesc
    desc = SmemDesc(start_address=1024, lbo_mode=1, swizzle="128b")
    assert desc.problems("sm_103a") == [] and len(desc.problems("sm_100a")) == 1
    # 9.7.18.3.1.2.1: the absolute mode takes only the 128B swizzle and base offset 0
    for other in (SmemDesc(start_address=1024, lbo_mode=1),
                  SmemDesc(start_address=1024, lbo_mode=1, swizzle="128b", base_offset=1)):
        (problem,) = other.problems("sm_103a")
        assert "[lbo-absolute-128b-a]" in problem


# -- UE4M3 with .block32, Table 62's transposes -------------------------------------------------

def test_ue4m3_with_block32_only_on_sm_107() -> None:
    word = InstrDescMxf4nvf4(atype=1, btype=1, n=256, m=128, scale_type=0).encode()
    for spelling in ("block32", "scale_vec::2X", "block16", "scale_vec::4X"):
        op = f"tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.{spelling}"
        for target in ("sm_100a", "sm_103a", "sm_110a", "sm_107a", "sm_107f"):
            got = ids(descriptor_problems(op, target=target, idesc=word))
            want = ["ue4m3-block32-sm107"] if spelling in ("block32", "scale_vec::2X") \
                and target not in SM107 else []
            assert got == want, (spelling, target, got)
    # UE5M3 exists only in the sm107 layout (the 2-bit scale type)
    ue5m3 = InstrDescSm107Mxf4nvf4(atype=1, btype=1, n=256, m=128, scale_type=2).encode()
    op = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"
    assert descriptor_problems(op, target="sm_107a", idesc=ue5m3) == []
    (msg,) = descriptor_problems(op, target="sm_100a", idesc=ue5m3)
    assert "valid in the sm107 layout" in msg


def f8f6f4_word(atype: int, k_dim: int, transpose_a: int = 0, transpose_b: int = 0) -> int:
    return InstrDescSm107F8f6f4(dtype=1, atype=atype, btype=atype, n=256, m=128,
                                k_dim=k_dim, transpose_a=transpose_a,
                                transpose_b=transpose_b).encode()


def test_no_transpose_of_fp6_fp4_at_dense_k64_nor_of_b_with_lut() -> None:
    op = "tcgen05.mma.cta_group::1.kind::f8f6f4"
    e2m1, e4m3 = 5, 0
    assert ids(descriptor_problems(op, target="sm_107a", idesc=f8f6f4_word(e2m1, 1, 1, 1))) == [
        "fp6-fp4-k64-no-transpose-a", "fp6-fp4-k64-no-transpose-b"]
    assert descriptor_problems(op, target="sm_107a", idesc=f8f6f4_word(e2m1, 0, 1, 1)) == []
    assert descriptor_problems(op, target="sm_107a", idesc=f8f6f4_word(e4m3, 1, 1, 1)) == []
    lut = "tcgen05.mma.cta_group::1.kind::f8f6f4.decompress::lut::b"
    assert ids(descriptor_problems(lut, target="sm_107a", idesc=f8f6f4_word(e4m3, 0, 0, 1))) \
        == ["lut-b-no-transpose-b"]
    assert descriptor_problems(lut, target="sm_107a", idesc=f8f6f4_word(e4m3, 0, 1, 0)) == []


def test_cpp_checks_agree(tmp_path: Path) -> None:
    """g++: the constexpr checks give the Python answers, by target."""
    ue4m3 = InstrDescMxf4nvf4(atype=1, btype=1, n=256, m=128, scale_type=0).encode()
    b32 = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32"
    k64 = "tcgen05.mma.cta_group::1.kind::f8f6f4"
    cases = [(SP, "sm_107a", sparse_word(0)), (SP, "sm_107f", sparse_word(0)),
             (SP, "sm_107a", sparse_word(1)), (SP, "sm_100a", sparse_word(0)),
             (SP, None, sparse_word(0)), (b32, "sm_100a", ue4m3), (b32, "sm_107a", ue4m3),
             (k64, "sm_107a", f8f6f4_word(5, 1, 1, 0)), (k64, "sm_107a", f8f6f4_word(5, 0, 1, 0))]
    got = cpp_results(tmp_path, cases)
    want = []
    for opcode, target, word in cases:
        py = descriptor_problems(opcode, target=target, idesc=word)
        want.append(ids(py)[0] if py else "ok")
    assert [m.rsplit("[", 1)[-1].rstrip("]") if m != "ok" else m for m in got] == want
    assert want == ["sparsity-version-sm107", "sparsity-version-sm107", "ok", "ok", "ok",
                    "ue4m3-block32-sm107", "ok", "fp6-fp4-k64-no-transpose-a", "ok"]
