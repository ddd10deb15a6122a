"""Issue 15: mbarrier.test_wait / try_wait ``.phase_type::primary`` and
``.phase_type::conditional`` (PTX ISA 9.3), against ptxas 13.0 and 13.5 and nvcc 13.0 / 13.5.

The builders write what ptxas 13.5 assembles (the joined ``waitComplete|isReportSeen`` of
::primary, ::conditional with .parity); ptxas 13.5 refuses them before .version 9.3 and
before sm_90 as the spec's gate says, ptxas 13.0 does not know them; ::conditional without
.parity is refused by the builder and by ptxas. The C++ wrappers return both predicates of
::primary (nvcc 13.5, which writes .version 9.5) and refuse the forms where nvcc 13.0 writes
.version 9.0 with the unsupported-target function naming 9.3."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import toolkits
from cpp import harness
from ptxas import wrappers

from ptxgen.isa.ptx import PtxFormError, mbarrier_test_wait, mbarrier_try_wait, support

PRIMARY = "mbarrier.try_wait.phase_type::primary.acquire.cta.shared::cta.b64 p1|p2, [r1], rd1;"
CONDITIONAL = ("mbarrier.test_wait.parity.phase_type::conditional.relaxed.cluster.shared::cta.b64"
               " p1, [r1], r2;")


def _assemble(ptxas: str, tmp_path: Path, body: str, target: str, version: str
              ) -> tuple[int, str]:
    return toolkits.assemble(ptxas, tmp_path, body, target, version)


def test_the_builders_write_what_ptxas_13_5_assembles_from_9_3(tmp_path: Path) -> None:
    primary = mbarrier_try_wait(phase_type="phase_type::primary", sem="acquire", scope="cta",
                                space="shared::cta", type="b64", wait_complete="p1",
                                is_report_seen="p2", addr="r1", state="rd1")
    conditional = mbarrier_test_wait(parity=True, phase_type="phase_type::conditional",
                                     sem="relaxed", scope="cluster", space="shared::cta",
                                     type="b64", wait_complete="p1", addr="r1",
                                     phase_parity="r2")
    assert (primary, conditional) == (PRIMARY, CONDITIONAL)
    ptxas = toolkits.require("ptxas", "13.5")
    for text in (primary, conditional):
        rc, out = _assemble(ptxas, tmp_path, text, "sm_90", "9.3")
        assert rc == 0, (text, out)
        rc, out = _assemble(ptxas, tmp_path, text, "sm_90", "9.2")
        assert rc != 0 and "requires PTX ISA .version 9.3 or later" in out, out
    rc, out = _assemble(ptxas, tmp_path, CONDITIONAL, "sm_89", "9.3")
    assert "Feature '.phase_type::conditional' requires .target sm_90 or higher" in out, out
    # ptxas 13.0 (PTX ISA 9.0) does not know the qualifier
    rc, out = _assemble(toolkits.require("ptxas", "13.0"), tmp_path, PRIMARY, "sm_90", "9.0")
    assert rc != 0 and "Unknown modifier '.phase_type::primary'" in out, out


def test_the_spec_gate_is_ptxas_gate() -> None:
    for opcode in (PRIMARY.split(" ")[0], CONDITIONAL.split(" ")[0]):
        lookup = support(opcode)
        assert lookup.valid and lookup.forms, lookup  # try_wait: with and without the hint
        for f in lookup.forms:
            assert f.support.since == "9.3"
            assert {"sm_90", "sm_100", "sm_120"} <= f.support.targets
            assert not {"sm_80", "sm_89"} & f.support.targets


def test_conditional_needs_parity_as_ptxas_says(tmp_path: Path) -> None:
    with pytest.raises(PtxFormError, match=r"conditional needs \.parity"):
        mbarrier_try_wait(phase_type="phase_type::conditional", sem="acquire", scope="cta",
                          space="shared::cta", type="b64", wait_complete="p1", addr="r1",
                          state="rd1")
    rc, out = _assemble(toolkits.require("ptxas", "13.5"), tmp_path,
                        "mbarrier.try_wait.phase_type::conditional.acquire.cta.shared::cta.b64"
                        " p1, [r1], rd1;", "sm_90", "9.3")
    assert rc != 0 and ".parity modifier required for instruction 'mbarrier.try_wait'" in out


KERNEL = """#include <cstdint>
#include "ptxgen/ptx.hpp"

extern "C" __global__ void k(std::uint32_t parity, std::uint32_t* out) {
    __shared__ std::uint64_t bar;
    using namespace ptxgen::ptx;
    const mbarrier_try_wait_parity_primary_result r = mbarrier_try_wait_parity_primary<
        mbarrier_try_wait_sem::acquire, mbarrier_try_wait_scope::cta,
        mbarrier_try_wait_space::shared_cta>(&bar, parity);
    out[0] = r.wait_complete;
    out[1] = r.is_report_seen;
    out[2] = mbarrier_test_wait_parity_conditional<mbarrier_test_wait_sem::none,
        mbarrier_test_wait_scope::none, mbarrier_test_wait_space::shared_cta>(&bar, parity);
}
"""


def test_the_wrappers_return_both_predicates_with_nvcc_13_5(tmp_path: Path) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    include = wrappers.snapshot_include(tmp_path)
    body = wrappers.kernel_body(KERNEL, "sm_90", tmp_path / "135",
                                toolkits.require("nvcc", "13.5"), include)
    waits = [re.sub(r"%r\d+", "%r", ln) for ln in body if ln.startswith("mbarrier.")]
    assert waits == [
        "mbarrier.try_wait.parity.phase_type::primary.acquire.cta.shared::cta.b64 p|q, [%r], %r;",
        "mbarrier.test_wait.parity.phase_type::conditional.shared::cta.b64 p, [%r], %r;",
    ], body
    # each destination predicate comes back through its own selp
    assert sum(1 for ln in body if re.fullmatch(r"selp\.u32 %r\d+, 1, 0, [pq];", ln)) == 3
    assert any(ln.endswith(", q;") for ln in body)
    # nvcc 13.0 writes .version 9.0: the forms exist from 9.3 only
    rc, out, _ = wrappers.compile_tu(KERNEL, "sm_90", tmp_path / "130", "cubin",
                                     include=include)
    assert rc != 0
    assert "_from_ptx_isa_9_3" in out and "ptxgen_unsupported_target_mbarrier" in out, out
