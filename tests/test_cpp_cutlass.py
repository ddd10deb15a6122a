"""Issue 5, point 5: CUTLASS's own descriptor bitfields as an external oracle.

tests/cpp/cutlass_oracle.cpp fills CUTLASS's UMMA::InstrDescriptor,
UMMA::InstrDescriptorBlockScaled, UMMA::SmemDescriptor, UMMA::MaskAndShiftB and
GmmaDescriptor and the generated ptxgen descriptors from the same field sets and requires
identical bits: every combination of allowed values for the instruction descriptors, every
value of each field plus a large random sample for the others. CUTLASS comes from the
nvidia-cutlass wheel (test-only dependency); nothing of it is committed. Where CUTLASS and
the PTX tables differ, spec/descriptors/*.yaml has a note saying which one ptxgen follows.
"""

from __future__ import annotations

import math
import re

import pytest
from cpp import harness
from cpp.harness import INCLUDE
from cpp.pyfields import field_infos, shape_pairs

from ptxgen.isa import DESCRIPTORS

ORACLE = harness.HERE / "cutlass_oracle.cpp"
RANDOM_SAMPLE = 1_000_000  # per address-carrying descriptor


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    nvcc = harness.tool("nvcc")
    cutlass = harness.cutlass_include()
    exe = tmp_path_factory.mktemp("cutlass") / "oracle"
    harness.run([nvcc, "-std=c++17", "-O2", "-x", "cu", f"-I{cutlass}", f"-I{INCLUDE}",
                 str(ORACLE), "-o", str(exe)])
    proc = harness.run([str(exe), str(RANDOM_SAMPLE)], ok=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    out: dict[str, dict[str, str]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("checked "):
            name, *pairs = line.split()[1:]
            out[name] = dict(p.split("=", 1) for p in pairs)
    return out


def test_cutlass_is_the_expected_release() -> None:
    version = (harness.cutlass_include() / "cutlass" / "version.h").read_text()
    found = tuple(int(re.search(rf"#define CUTLASS_{k} (\d+)", version).group(1))  # type: ignore[union-attr]
                  for k in ("MAJOR", "MINOR"))
    assert found >= (4, 2), found


@pytest.mark.parametrize("kind", sorted(k for k in DESCRIPTORS["instr_desc"]))
def test_every_instruction_descriptor_agrees(kind: str, report: dict[str, dict[str, str]]) -> None:
    """Every combination of the values the kind allows (the same domains as the Python
    classes; M and N together: every tcgen05.mma shape of the kind), bit for bit."""
    row = report[f"instr_desc:{kind}"]
    assert row["mismatches"] == "0"
    cls = DESCRIPTORS["instr_desc"][kind]
    infos = field_infos(cls)
    # m and n are one domain: the (M, N) shapes of the kind, where n is in the field order
    expected = [len(shape_pairs(cls)) if f.name == "n" else f.count for f in infos
                if f.name != "m"]
    if kind == "mxf8f6f4":  # Table 43 has no k_dim; the oracle keeps CUTLASS's k_size_ at 0
        expected.append(1)
    assert row["domains"].rstrip(",").split(",") == [str(c) for c in expected]
    assert int(row["combinations"]) == math.prod(expected)


def test_cutlass_typed_builders_agree(report: dict[str, dict[str, str]]) -> None:
    assert report["make_instr_desc"]["mismatches"] == "0"


@pytest.mark.parametrize("name", ["smem_desc", "wgmma_desc", "zero_column_mask_desc"])
def test_address_carrying_descriptors_agree(name: str, report: dict[str, dict[str, str]]) -> None:
    row = report[name]
    assert row["mismatches"] == "0"
    infos = field_infos(DESCRIPTORS[name][None])
    assert row["domains"].rstrip(",").split(",") == [str(f.count) for f in infos]
    assert int(row["combinations"]) == sum(f.count for f in infos) + RANDOM_SAMPLE


def test_nothing_from_cutlass_is_committed() -> None:
    """CUTLASS's headers are only ever read from the installed wheel."""
    for folder in (harness.ROOT / "tests", harness.ROOT / "generated"):
        assert not [p for p in folder.rglob("*") if p.name in ("cute", "cutlass")]
