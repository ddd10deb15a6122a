"""Issue 15: the joined destination pair ``d|p`` of ``elect.sync`` (operand ``joined``).

The Python builder writes the pair with ``|`` (the sink ``_`` for d), and ptxas 13.0 and
13.5 assemble what it writes; the C++ wrappers return both destinations
(``elect_sync_lane`` a struct {lane, elected}, ``elect_sync`` the predicate of the sink
form) and refuse targets before sm_90 in ptxas with the unsupported-target function; the
validator refuses a ``joined`` operand that is not a predicate output after another
output. The same-PTX check against hand-written asm is in tests/ptxas/same_ptx.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import toolkits
from cpp import harness
from ptxas import wrappers

from ptxgen import pipeline
from ptxgen.errors import SpecError
from ptxgen.isa.ptx import PtxFormError, elect_sync

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"


def _assemble(ptxas: str, tmp_path: Path, body: str, target: str = "sm_90",
              version: str = "8.0") -> tuple[int, str]:
    return toolkits.assemble(ptxas, tmp_path, body, target, version)


def test_the_builder_writes_the_pair_joined_and_ptxas_assembles_it(tmp_path: Path) -> None:
    lane = elect_sync(lane="r1", elected="p1", membermask="r2")
    sink = elect_sync(sink=True, elected="p1", membermask=0xFFFFFFFF)
    assert lane == "elect.sync r1|p1, r2;"
    assert sink == "elect.sync _|p1, 4294967295;"
    for ptxas in toolkits.all_ptxas():
        for text in (lane, sink):
            rc, out = _assemble(ptxas, tmp_path, text)
            assert rc == 0, (ptxas, text, out)
        # ptxas's own refusal of the form the builder never writes (the pair unjoined)
        rc, out = _assemble(ptxas, tmp_path, "elect.sync r1, r2;")
        assert rc != 0 and "Predicate output expected for instruction 'elect'" in out
        # and the gates the spec records
        rc, out = _assemble(ptxas, tmp_path, lane, version="7.8")
        assert "Feature 'elect' requires PTX ISA .version 8.0 or later" in out
        rc, out = _assemble(ptxas, tmp_path, lane, target="sm_89")
        assert "Feature 'elect' requires .target sm_90 or higher" in out


def test_the_builder_takes_exactly_one_of_lane_and_sink() -> None:
    with pytest.raises(PtxFormError, match="operand d: give exactly one of lane, sink"):
        elect_sync(lane="r1", sink=True, elected="p1", membermask="r2")
    with pytest.raises(PtxFormError, match="operand d: give exactly one of lane, sink"):
        elect_sync(elected="p1", membermask="r2")
    with pytest.raises(PtxFormError, match="operand elected"):
        elect_sync(lane="r1", elected="p1|p2", membermask="r2")


KERNEL = """#include <cstdint>
#include "ptxgen/ptx.hpp"

extern "C" __global__ void k(std::uint32_t mask, std::uint32_t* out) {
    const ptxgen::ptx::elect_sync_lane_result r = ptxgen::ptx::elect_sync_lane(mask);
    out[0] = r.lane;
    out[1] = r.elected;
    out[2] = ptxgen::ptx::elect_sync(mask);
}
"""


def test_the_wrappers_return_both_destinations_and_refuse_old_targets(tmp_path: Path) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    include = wrappers.snapshot_include(tmp_path)
    rc, out, kernels = wrappers.compile_tu(KERNEL, "sm_90", tmp_path / "90", "cubin",
                                           include=include)
    assert rc == 0, out
    body = wrappers.instructions_in(kernels["k"])
    elects = [ln for ln in body if ln.startswith("elect.sync")]
    assert len(elects) == 2
    assert elects[0].startswith("elect.sync %r") and "|p, %r" in elects[0]
    assert elects[1].startswith("elect.sync _|p, %r")
    rc, out, _ = wrappers.compile_tu(KERNEL, "sm_80", tmp_path / "80", "cubin",
                                     include=include)
    assert rc != 0
    assert ("ptxgen_unsupported_target_elect_sync_is_only_on_sm_90_and_later_from_ptx_isa_8_0"
            in out)


@pytest.fixture()
def sync_spec(tmp_path: Path) -> Path:
    dst = tmp_path / "spec"
    (dst / "instructions").mkdir(parents=True)
    shutil.copy(SPEC / "targets.yaml", dst / "targets.yaml")
    shutil.copy(SPEC / "instructions" / "sync.yaml", dst / "instructions")
    shutil.copytree(SPEC / "schema", dst / "schema")
    return dst


@pytest.mark.parametrize("old, new", [
    # joined on an input operand
    ("      - name: membermask\n        kind: register\n",
     "      - name: membermask\n        joined: true\n        kind: register\n"),
    # joined on the first operand (nothing to join to)
    ("      - name: d\n        description: the lane id",
     "      - name: d\n        joined: true\n        description: the lane id"),
])
def test_validate_refuses_a_misplaced_joined_operand(sync_spec: Path, old: str,
                                                     new: str) -> None:
    path = sync_spec / "instructions" / "sync.yaml"
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    with pytest.raises(SpecError) as info:
        pipeline.load_model(sync_spec)
    assert any("joined operand" in str(d) and "must be a predicate output" in str(d)
               for d in info.value.diagnostics), info.value.diagnostics
