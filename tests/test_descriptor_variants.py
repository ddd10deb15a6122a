"""The sm107 descriptor layouts (PTX ISA 9.4, sm_107a / sm_107f) against an independent
oracle, the CuTe DSL 4.8.1, and the target / version model around them.

Oracle: tests/fixtures/dsl/descriptor_words.jsonl holds words the DSL's descriptor
classes and its compiler produced on a CPU (scripts/dsl_descriptor_facts.py says how);
with PTXGEN_CUTE_DSL_PYTHON naming a Python that has the DSL, the instruction descriptor
words are also recomputed by the DSL itself. ptxas cannot check descriptor bits (it
does not inspect idesc immediates) and CUTLASS 4.2 has none of the new bits, so they
are oracles for the baseline only (tests/test_cpp_cutlass.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ptxgen.isa import (
    DESCRIPTORS,
    VARIANTS,
    DescriptorError,
    InstrDescSm107F8f6f4,
    InstrDescSm107Mxf4nvf4,
    InstrDescSm107Mxf8f6f4,
    SmemDesc,
    SmemDescSm107,
    UnavailableError,
    descriptor_class,
)

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "fixtures" / "dsl" / "descriptor_words.jsonl"

DENSE_TYPES = {"Float16": ("f16", "f16"), "BFloat16": ("f16", "bf16"), "Float32": ("tf32", "tf32"),
               "Float8E4M3FN": ("f8f6f4", "e4m3"), "Float8E5M2": ("f8f6f4", "e5m2"),
               "Float6E2M3FN": ("f8f6f4", "e2m3"), "Float6E3M2FN": ("f8f6f4", "e3m2"),
               "Float4E2M1FN": ("f8f6f4", "e2m1"), "Int8": ("i8", "s8"), "Uint8": ("i8", "u8")}
C_TYPES = {"Float16": "f16", "Float32": "f32", "Int32": "s32"}


def _facts() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FACTS.read_text(encoding="utf-8").splitlines()]


def _ptxgen_case(rec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, ptxgen fields) for one DSL class call (the mapping of the DSL's argument
    names to the table's field names)."""
    a = rec["args"]
    if rec["class"] == "Tcgen05InstrDesc":
        kind, atype = DENSE_TYPES[a["a_dtype"]]
        return kind, dict(
            sparsity_selector=a["sparse_id2"], sparsity=a["sparse_flag"], saturate=a["saturate"],
            dtype=C_TYPES[a["c_dtype"]], atype=atype, btype=DENSE_TYPES[a["b_dtype"]][1],
            negate_a=a["a_negate"], negate_b=a["b_negate"], transpose_a=a["a_major"],
            transpose_b=a["b_major"], m=a["m_dim"], n=a["n_dim"], k_dim=a["k_dim"],
            max_shift=a["max_shift"])
    common = dict(sparsity=a["sparse_flag"], scale_b_id=a["b_sf_id"], m=a["m_dim"],
                  n=a["n_dim"], scale_a_id=a["a_sf_id"], scale_type=a["scale_format"],
                  scale_a_layout=a["a_sf_layout"])
    if rec["class"] == "Tcgen05MxInstrDesc":
        return "mxf8f6f4", dict(common, atype=DENSE_TYPES[a["a_dtype"]][1],
                                btype=DENSE_TYPES[a["b_dtype"]][1], k_dim=a["k_dim"])
    assert rec["class"] == "Tcgen05MxOmmaInstrDesc"
    return "mxf4nvf4", dict(common, atype="e2m1", btype="e2m1", k_dim=a["k_dim"] & 1,
                            k_dim_hi=a["k_dim"] >> 1, sparsity_version=a["sparsity_version"],
                            negate_a=a["a_negate"], negate_b=a["b_negate"])


def _encode(cls: Any, fields: dict[str, Any]) -> int | None:
    specs = {f.name: f for f in cls.FIELDS}
    values = {k: specs[k].names.get(v, v) if isinstance(v, str) else v
              for k, v in fields.items() if k in specs}
    if any(v for k, v in fields.items() if k not in specs):
        return None  # a field this layout does not have (k_dim on the baseline)
    try:
        return int(cls(**values).encode())
    except DescriptorError:
        return None  # a value the table does not allow (the DSL classes do not check)


def test_instr_desc_words_match_the_dsl_classes() -> None:
    """Every sampled DSL word that the sm107 table allows is ptxgen's word, bit for bit;
    where the baseline table allows it too, the baseline class gives the same word."""
    compared = baseline_compared = 0
    for rec in _facts():
        if rec["source"] != "dsl-classes" or rec["class"] == "Tcgen05SmemDesc":
            continue
        kind, fields = _ptxgen_case(rec)
        if kind == "i8":  # no .kind::i8 on sm_107a/f: the baseline table only
            cls = DESCRIPTORS["instr_desc"][kind]
        else:
            cls = descriptor_class("instr_desc", kind, "sm_107a")
        word = _encode(cls, fields)
        if word is None:
            continue
        assert word == int(rec["word"], 16), (rec, hex(word))
        compared += 1
        base = _encode(DESCRIPTORS["instr_desc"][kind], fields)
        if base is not None:
            assert base == word, rec
            baseline_compared += 1
    assert compared >= 150 and baseline_compared >= 50, (compared, baseline_compared)


def test_smem_desc_words_match_the_dsl_class() -> None:
    """Every DSL shared memory descriptor word whose fields the sm107 table allows
    (the DSL also writes versions other than 1 and truncates wide addresses; ptxgen
    refuses both) is SmemDescSm107's word; below 256 KiB the baseline agrees."""
    compared = refused = 0
    for rec in _facts():
        if rec.get("class") != "Tcgen05SmemDesc":
            continue
        a = rec["args"]
        fields = dict(start_address=a["start_address"],
                      leading_byte_offset=a["leading_byte_offset"],
                      stride_byte_offset=a["stride_byte_offset"], base_offset=a["base_offset"],
                      lbo_mode=a["leading_dim_mode"], k_segment=a["k_segment_offset"],
                      swizzle=a["layout"])
        try:
            desc = SmemDescSm107(**fields)
        except DescriptorError:
            assert (a["version"] != 1 or max(a["start_address"], a["leading_byte_offset"]) >=
                    0x80000 or a["stride_byte_offset"] >= 0x40000
                    or a["layout"] in (3, 5, 7)), rec  # swizzle codes Table 40 leaves invalid
            refused += 1
            continue
        if a["version"] != 1:
            refused += 1
            continue
        assert desc.encode() == int(rec["word"], 16), rec
        compared += 1
        narrow = max(a["start_address"], a["leading_byte_offset"]) < 0x40000
        if not a["k_segment_offset"] and narrow:
            assert SmemDesc(**{k: v for k, v in fields.items() if k != "k_segment"}).encode() \
                == desc.encode()
    assert compared >= 8 and refused >= 3, (compared, refused)


def test_compiler_words() -> None:
    """The DSL compiler's words for its MMA atoms on sm_100a (baseline classes) and sm_107a
    (sm107 classes); the DSL's descriptor classes are not involved."""
    by_case = {r["case"]: r for r in _facts() if r["source"] == "dsl-compiler"}
    f16, f8, mx8 = (DESCRIPTORS["instr_desc"][k] for k in ("f16", "mxf4nvf4", "mxf8f6f4"))
    expect = {
        "sm100_f16_bf16": f16(dtype=1, atype=1, btype=1, m=128, n=256),
        "sm100_nvf4_ue4m3_b16": f8(atype=1, btype=1, m=128, n=256, scale_type=0),
        "sm100_nvf4_ue8m0_b16": f8(atype=1, btype=1, m=128, n=256, scale_type=1),
        "sm100_mxf8": mx8(m=128, n=256, scale_type=1),
        "sm107_fp8_k64": InstrDescSm107F8f6f4(dtype=1, m=128, n=256, k_dim=1),
        "sm107_fp8_k32": InstrDescSm107F8f6f4(dtype=1, m=128, n=256, k_dim=0),
        "sm107_mxf8_e4m3_k64": InstrDescSm107Mxf8f6f4(m=128, n=256, k_dim=1, scale_type=1),
        "sm107_mxf8_e5m2_mn_k64": InstrDescSm107Mxf8f6f4(
            atype=1, btype=1, transpose_a=1, transpose_b=1, m=128, n=128, k_dim=1,
            scale_type=1),
        "sm107_nvf4_ue4m3_b16": InstrDescSm107Mxf4nvf4(atype=1, btype=1, m=128, n=256,
                                                       k_dim_hi=1, scale_type=0),
        "sm107_nvf4_ue8m0_b32": InstrDescSm107Mxf4nvf4(atype=1, btype=1, m=128, n=256,
                                                       k_dim_hi=1, scale_type=1),
        "sm107_nvf4_ue5m3_b16": InstrDescSm107Mxf4nvf4(atype=1, btype=1, m=128, n=256,
                                                       k_dim_hi=1, scale_type=2),
        "sm107_nvf4_ue5m3_b32": InstrDescSm107Mxf4nvf4(atype=1, btype=1, m=128, n=256,
                                                       k_dim_hi=1, scale_type=2),
        "sm107_nvf4_ue4m3_b16_cg2": InstrDescSm107Mxf4nvf4(atype=1, btype=1, m=256, n=256,
                                                           k_dim_hi=1, scale_type=0),
    }
    assert sorted(expect) == sorted(by_case)
    for case, desc in expect.items():
        assert desc.hex() == by_case[case]["idesc"], case
        assert descriptor_class("instr_desc", desc.KIND, by_case[case]["arch"]) is type(desc)
    # shared memory address masks: 15 bits on sm_107a, 14 elsewhere
    for r in by_case.values():
        mask = int(r["smem_desc_and_masks"][-1], 16)
        cls = descriptor_class("smem_desc", None, r["arch"])
        assert cls.FIELDS[0].width == mask.bit_length(), r


@pytest.mark.skipif(not os.environ.get("PTXGEN_CUTE_DSL_PYTHON"),
                    reason="PTXGEN_CUTE_DSL_PYTHON (a Python with nvidia-cutlass-dsl) not set")
def test_live_dsl_classes() -> None:
    """With the DSL installed: recompute the pinned words with the DSL's classes."""
    code = (
        "import cutlass as F, json\n"
        "from cutlass.experimental.primitives import descriptors as d\n"
        "print(json.dumps([\n"
        " d.Tcgen05InstrDesc.build(a_dtype=F.Float8E4M3FN, b_dtype=F.Float8E4M3FN,"
        " c_dtype=F.Float32, m_dim=128, n_dim=256, k_dim=1).value & 0xffffffff,\n"
        " d.Tcgen05MxOmmaInstrDesc.build(a_dtype=F.Float4E2M1FN, b_dtype=F.Float4E2M1FN,"
        " scale_format=2, m_dim=128, n_dim=256, k_dim=2, sparsity_version=0).value & 0xffffffff,\n"
        "]))\n")
    out = subprocess.run([os.environ["PTXGEN_CUTE_DSL_PYTHON"], "-c", code], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    f8, nvf4 = json.loads(out.strip().splitlines()[-1])
    assert InstrDescSm107F8f6f4(dtype=1, m=128, n=256, k_dim=1).encode() == f8
    assert InstrDescSm107Mxf4nvf4(m=128, n=256, k_dim_hi=1, scale_type=2, atype=1,
                                  btype=1).encode() == nvf4


def test_selection_by_target_and_version() -> None:
    assert descriptor_class("smem_desc", None, "sm_107f") is SmemDescSm107
    assert descriptor_class("smem_desc", None, "sm_107a", "9.3") is SmemDesc
    assert descriptor_class("smem_desc", None, "sm_100f") is SmemDesc  # baseline PTX
    assert descriptor_class("smem_desc") is SmemDesc
    assert SmemDescSm107.SINCE == "9.4" and SmemDescSm107.TARGETS == ("sm_107a", "sm_107f")
    assert SmemDesc.VARIANT is None
    with pytest.raises(UnavailableError, match=r"ti16.*sm_107a, sm_107f from PTX ISA 9\.4"):
        descriptor_class("instr_desc", "ti16", "sm_100a")
    with pytest.raises(UnavailableError, match="i8"):
        descriptor_class("instr_desc", "i8", "sm_107a")
    assert [v[0] for v in VARIANTS["instr_desc"]] == ["sm107"]


def test_baseline_refuses_new_fields_naming_target_and_version() -> None:
    with pytest.raises(UnavailableError, match=r"k_segment.*sm_107a, sm_107f from PTX ISA 9\.4"):
        SmemDesc(k_segment=1)  # type: ignore[call-arg]
    with pytest.raises(UnavailableError, match="k_segment"):
        SmemDesc().replace(k_segment=1)
    # A start address is a shared-memory address that encode() masks (Table 40: x & 0x3FFFF;
    # the sm107 layout: x & 0x7FFFF; tests/test_descriptor_shared_address.py): bit 18 is
    # dropped by the baseline layout and kept by the sm107 one, bit 19 by neither.
    assert SmemDesc(start_address=0x40000).encode() == SmemDesc().encode()
    assert SmemDescSm107(start_address=0x40000).hex() == "0x0000400000004000"
    assert SmemDescSm107(start_address=0x80000).encode() == SmemDescSm107().encode()
    with pytest.raises(DescriptorError, match="0x3fff0"):
        SmemDesc(leading_byte_offset=0x40000)
    with pytest.raises(DescriptorError, match="0x7fff0"):
        SmemDescSm107(leading_byte_offset=0x80000)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``ptxgen ARGS`` (in this process: conftest.run_main)."""
    from conftest import run_main

    r = run_main(*args, cwd=ROOT)
    return subprocess.CompletedProcess(list(args), r.code, r.out, r.err)


@pytest.mark.parametrize(("args", "out"), [
    (("encode", "smem_desc", "--target", "sm_107a", "start_address=0x40000"),
     "0x0000400000004000"),
    (("encode", "instr_desc", "--kind", "mxf4nvf4", "--target", "sm_107f", "m=128", "n=256",
      "atype=e2m1", "btype=e2m1", "scale_type=ue5m3", "k_dim_hi=1"), "0x09400488"),
    (("encode", "instr_desc", "--kind", "f8f6f4", "--target", "sm_107a", "--ptx-isa", "9.5",
      "dtype=f32", "m=128", "n=256", "k_dim=1"), "0x28400010"),
    (("decode", "smem_desc", "--target", "sm_107a", "0x0020400000000000"), "k_segment=second"),
])
def test_cli_target(args: tuple[str, ...], out: str) -> None:
    r = _cli(*args)
    assert r.returncode == 0, r.stderr
    assert out in r.stdout.splitlines()


@pytest.mark.parametrize(("args", "err"), [
    (("encode", "smem_desc", "k_segment=1"),
     "k_segment: exists only on sm_107a, sm_107f from PTX ISA 9.4"),
    (("encode", "smem_desc", "--target", "sm_107a", "--ptx-isa", "9.3", "k_segment=1"),
     "sm_107a does not exist at PTX ISA 9.3"),
    (("encode", "instr_desc", "--kind", "ti16", "--target", "sm_100a", "m=128", "n=256"),
     ".kind::ti16 exists only on sm_107a, sm_107f from PTX ISA 9.4"),
    (("encode", "instr_desc", "--kind", "i8", "--target", "sm_107f", "m=128", "n=256"),
     "'i8' does not exist for instr_desc on sm_107f"),
    (("decode", "instr_desc", "--kind", "mxf4nvf4", "0x09400488"), "add --target sm_107a"),
    (("encode", "smem_desc", "--target", "sm_999a"), "unknown target 'sm_999a'"),
])
def test_cli_target_errors(args: tuple[str, ...], err: str) -> None:
    r = _cli(*args)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert err in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


# -- C++: g++ for the constexpr types, nvcc 13.5 for the target-selected aliases ----------

def _cpp_words() -> str:
    """static_asserts of the C++ variant types against the DSL compiler's words."""
    by_case = {r["case"]: r for r in _facts() if r["source"] == "dsl-compiler"}
    lines = []
    for case, expr in (
            ("sm107_fp8_k64", "InstrDescSm107F8f6f4{}.with_dtype(InstrDescSm107F8f6f4::Dtype::F32)"
             ".with_m(128).with_n(256).with_k_dim(1)"),
            ("sm107_fp8_k32", "InstrDescSm107F8f6f4{}.with_dtype(InstrDescSm107F8f6f4::Dtype::F32)"
             ".with_m(128).with_n(256)"),
            ("sm107_mxf8_e4m3_k64", "InstrDescSm107Mxf8f6f4{}.with_m(128).with_n(256)"
             ".with_k_dim(1)")):
        lines.append(f"static_assert({expr}.encode() == {by_case[case]['idesc']}u, \"{case}\");")
    nvf4 = sorted({r["idesc"] for r in by_case.values()
                   if r["arch"] == "sm_107a" and "mxf4nvf4" in r["opcode"]})
    for word in nvf4:  # decode -> encode round trip of every compiler word (K 128, UE5M3)
        lines.append(f"static_assert(InstrDescSm107Mxf4nvf4::decode({word}u).encode() == "
                     f"{word}u, \"{word}\");")
    lines.append("static_assert(InstrDescSm107Mxf4nvf4::decode(0x09400488u).scale_type == "
                 "InstrDescSm107Mxf4nvf4::ScaleType::UE5M3, \"ue5m3\");")
    lines.append("static_assert(SmemDescSm107{}.with_start_address(0x40000u).encode() == "
                 "0x0000400000004000ull, \"bit 14\");")
    lines.append("static_assert(SmemDescSm107::since_ptx_isa == 94u && SmemDesc::since_ptx_isa "
                 "== 0u, \"since\");")
    return "\n".join(lines)


def _gxx(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    import shutil

    from cpp.harness import GXX_FLAGS
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.fail("g++ is required") if os.environ.get("CI") else pytest.skip("no g++")
    src = tmp_path / "variant.cpp"
    src.write_text('#include "ptxgen/ptxgen.hpp"\nusing namespace ptxgen;\n' + body +
                   "\nint main() { return 0; }\n")
    return subprocess.run([gxx, *GXX_FLAGS, "-c", str(src), "-o", str(tmp_path / "v.o")],
                          capture_output=True, text=True, timeout=600)


def test_cpp_variant_types_match_the_dsl_compiler_words(tmp_path: Path) -> None:
    r = _gxx(tmp_path, _cpp_words())
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize(("body", "names"), [
    ("constexpr auto w = SmemDesc{}.with_k_segment(SmemDescSm107::KSegment::SECOND);",
     "with_k_segment"),
    ("constexpr auto w = SmemDescSm107{}.with_leading_byte_offset(0x80000u).encode();",
     "leading_byte_offset"),
    ("constexpr auto w = InstrDescMxf4nvf4{}.with_m(128).with_n(256).with_k_dim_hi(1);",
     "with_k_dim_hi"),
    ("constexpr auto w = InstrDescSm107Mxf4nvf4{}.with_m(128).with_n(256).with_scale_type("
     "static_cast<InstrDescSm107Mxf4nvf4::ScaleType>(3)).encode();", "scale_type"),
])
def test_cpp_compile_errors_name_the_field(tmp_path: Path, body: str, names: str) -> None:
    r = _gxx(tmp_path, body)
    assert r.returncode != 0
    assert names in r.stderr, r.stderr[-3000:]


@pytest.mark.parametrize(("arch", "smem", "kind_only"), [
    ("sm_107a", "SmemDescSm107", "Ti16"), ("sm_107f", "SmemDescSm107", "Ti16"),
    ("sm_100a", "SmemDesc", "I8"), ("sm_100f", "SmemDesc", "I8"), ("sm_103a", "SmemDesc", "I8"),
])
def test_nvcc_selects_the_layout_of_the_target(tmp_path: Path, arch: str, smem: str,
                                               kind_only: str) -> None:
    """nvcc 13.5: ``SmemDescForTarget`` / ``InstrDesc<Kind>ForTarget`` are the sm107 types
    in device code for sm_107a / sm_107f, the baseline ones for other targets, in nvcc's
    generic compute_XX pass of an a / f build (which has no tcgen05) and on the host; a
    kind that only one layout has exists only there."""
    import toolkits
    from cpp.harness import NVCC_FLAGS
    nvcc = toolkits.require("nvcc", "13.5")
    src = tmp_path / "k.cu"
    src.write_text(
        '#include "ptxgen/ptxgen.hpp"\n#include <type_traits>\n'
        "#if defined(__CUDA_ARCH_SPECIFIC__) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__)\n"
        f"static_assert(std::is_same<ptxgen::SmemDescForTarget, ptxgen::{smem}>::value, "
        f"\"{arch}\");\n"
        f"static_assert(ptxgen::InstrDesc{kind_only}ForTarget::descriptor_name() != nullptr, "
        "\"kind\");\n"
        "#else\n"
        "static_assert(std::is_same<ptxgen::SmemDescForTarget, ptxgen::SmemDesc>::value, "
        "\"host\");\n"
        "#endif\n"
        "__global__ void k(unsigned long long* out) {\n"
        "  constexpr auto d = ptxgen::SmemDescForTarget{}.with_start_address(0x1000u);\n"
        "  *out = d.encode();\n}\n")
    r = subprocess.run([nvcc, *NVCC_FLAGS, f"-arch={arch}", "-c", str(src), "-o",
                        str(tmp_path / "k.o")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
