"""Issue 15: mbarrier.test_wait / try_wait ``.phase_type::primary`` and
``.phase_type::conditional`` (PTX ISA 9.3), against ptxas 13.0 and 13.5 and nvcc 13.0 / 13.5.

The builders write what ptxas 13.5 assembles (the joined ``waitComplete|isReportSeen`` of
::primary, ::conditional with .parity); ptxas 13.5 refuses them before .version 9.3 and
before sm_90 as the spec's gate says, ptxas 13.0 does not know them; ::conditional without
.parity is refused by the builder and by ptxas. The C++ wrappers return both predicates of
::primary (nvcc 13.5, which writes .version 9.5) and refuse the forms where nvcc 13.0 writes
.version 9.0 with the unsupported-target function naming 9.3.

The optional 8-bit reportValue of ::primary (after the predicates) is held to ptxas 13.5
(a .b8 register; .b16 / .b32, ::conditional and no .phase_type refused), to
ptxas 13.5's sm_90 gate and to ptxas 13.0, which does not know it; the _report wrappers
return it as std::uint8_t through a scoped .reg .b8 and a cvt.u32.u8 (nvcc 13.5), with the
PTX and SASS of the same instruction written as hand-written inline asm."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import toolkits
from cpp import harness
from ptxas import same_ptx, wrappers

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


# -- the .b8 reportValue of ::primary ----------------------------------------------------

REPORT_DECLS = ".reg .b32 r<4>;\n.reg .b64 rd<4>;\n.reg .pred p<3>;\n.reg .b8 rb;\n"


def _report_forms() -> list[str]:
    common = {"phase_type": "phase_type::primary", "type": "b64", "wait_complete": "p1",
              "is_report_seen": "p2", "report_value": "rb"}
    return [
        mbarrier_test_wait(sem="acquire", scope="cta", space="shared::cta", addr="r1",
                           state="rd1", **common),
        mbarrier_test_wait(parity=True, sem="relaxed", scope="cluster", space="shared",
                           addr="r1", phase_parity=1, **common),
        mbarrier_try_wait(addr="rd2", state="rd1", **common),
        mbarrier_try_wait(parity=True, sem="acquire", scope="cluster", space="shared::cta",
                          addr="r1", phase_parity="r2", suspend_time_hint=1000, **common),
    ]


def test_the_report_value_builders_write_what_ptxas_13_5_assembles(tmp_path: Path) -> None:
    forms = _report_forms()
    assert forms == [
        "mbarrier.test_wait.phase_type::primary.acquire.cta.shared::cta.b64"
        " p1|p2, rb, [r1], rd1;",
        "mbarrier.test_wait.parity.phase_type::primary.relaxed.cluster.shared.b64"
        " p1|p2, rb, [r1], 1;",
        "mbarrier.try_wait.phase_type::primary.b64 p1|p2, rb, [rd2], rd1;",
        "mbarrier.try_wait.parity.phase_type::primary.acquire.cluster.shared::cta.b64"
        " p1|p2, rb, [r1], r2, 1000;",
    ]
    ptxas = toolkits.require("ptxas", "13.5")
    # a register, neither the sink nor an immediate: the builder refuses both, and so does
    # ptxas (the immediate crashes ptxas 13.3 to 13.5: a negative exit status, no message)
    for value, message in (("_", "Parsing error near '_': syntax error"), (3, "")):
        with pytest.raises(PtxFormError, match=r"operand report_value: .* is not allowed"):
            mbarrier_try_wait(phase_type="phase_type::primary", type="b64",
                              wait_complete="p1", is_report_seen="p2", report_value=value,
                              addr="rd2", state="rd1")
        rc, out = toolkits.assemble(ptxas, tmp_path, forms[2].replace(" rb,", f" {value},"),
                                    "sm_90", "9.3", REPORT_DECLS)
        assert rc != 0 and message in out, out
    for text in forms:
        rc, out = toolkits.assemble(ptxas, tmp_path, text, "sm_90", "9.3", REPORT_DECLS)
        assert rc == 0, (text, out)
        # the report value is an 8-bit register: not a 16- or 32-bit one
        for reg in ("rh", "r0"):
            rc, out = toolkits.assemble(ptxas, tmp_path, text.replace(" rb,", f" {reg},"),
                                        "sm_90", "9.3", REPORT_DECLS + ".reg .b16 rh;\n")
            op = text.split(".phase_type")[0]
            assert rc != 0 and f"Arguments mismatch for instruction '{op}'" in out, out
    # the spec's gate: sm_90 (ptxas 13.5 names the report value), from 9.3
    rc, out = toolkits.assemble(ptxas, tmp_path, forms[0], "sm_89", "9.3", REPORT_DECLS)
    assert rc != 0
    assert "Feature 'mbarrier with reportValue argument' requires .target sm_90 or higher" \
        in out, out
    rc, out = toolkits.assemble(ptxas, tmp_path, forms[3], "sm_90", "9.2", REPORT_DECLS)
    assert rc != 0 and "requires PTX ISA .version 9.3 or later" in out, out
    # ptxas 13.0 (PTX ISA 9.0) knows neither the qualifier nor the operand
    rc, out = toolkits.assemble(toolkits.require("ptxas", "13.0"), tmp_path, forms[3],
                                "sm_90", "9.0", REPORT_DECLS)
    assert rc != 0 and "Unknown modifier '.phase_type::primary'" in out, out
    assert "Arguments mismatch for instruction 'mbarrier.try_wait.parity'" in out, out


def test_the_report_value_needs_primary_as_ptxas_says(tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", "13.5")
    for phase_type in ("phase_type::conditional", None):
        with pytest.raises(PtxFormError, match=r"operand report_value is not allowed here"):
            mbarrier_try_wait(parity=True, phase_type=phase_type, type="b64",
                              wait_complete="p1", report_value="rb", addr="rd2",
                              phase_parity="r2")
        text = ("mbarrier.try_wait.parity" + (f".{phase_type}" if phase_type else "")
                + ".b64 p1, rb, [rd2], r2;")
        rc, out = toolkits.assemble(ptxas, tmp_path, text, "sm_90", "9.3", REPORT_DECLS)
        assert rc != 0 and "Arguments mismatch for instruction 'mbarrier.try_wait.parity'" \
            in out, (text, out)
    # every form with it is a ::primary one, from sm_90 and 9.3
    lookup = support("mbarrier.test_wait.phase_type::primary.b64")
    reported = [f for f in lookup.forms if "report_value" in f.variant_text]
    assert len(reported) == 1 and reported[0].support.since == "9.3"
    assert not {"sm_80", "sm_89"} & reported[0].support.targets


REPORT_WRAPPER = (
    "__shared__ std::uint64_t b[1];\n"
    "    using namespace ptxgen::ptx;\n"
    "    const mbarrier_try_wait_parity_primary_report_result r =\n"
    "        mbarrier_try_wait_parity_primary_report<mbarrier_try_wait_sem::acquire,\n"
    "            mbarrier_try_wait_scope::cta, mbarrier_try_wait_space::shared_cta>(\n"
    "            b, parity, 1000u);\n"
    "    static_assert(std::is_same_v<decltype(r.report_value), std::uint8_t>);\n"
    "    out[0] = r.wait_complete ? 1u : 0u;\n"
    "    out[1] = r.is_report_seen ? 1u : 0u;\n"
    "    out[2] = r.report_value;\n"
    "    const mbarrier_test_wait_primary_report_result t =\n"
    "        mbarrier_test_wait_primary_report<mbarrier_test_wait_sem::none,\n"
    "            mbarrier_test_wait_scope::none, mbarrier_test_wait_space::none>(\n"
    "            bar, state);\n"
    "    out[3] = t.report_value;")
# The same, written by hand from the PTX syntax (scratch registers named as the wrapper's,
# so that the PTX text compares; the SASS comparison does not depend on names).
REPORT_HAND = (
    "__shared__ std::uint64_t b[1];\n"
    "    const std::uint32_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(b));\n"
    "    std::uint32_t done, seen, value, done2, seen2, value2;\n"
    '    asm volatile("{\\n\\t.reg .pred p, q;\\n\\t.reg .b8 b8_report_value;\\n\\t"\n'
    '                 "mbarrier.try_wait.parity.phase_type::primary.acquire.cta.shared::cta.b64"\n'
    '                 " p|q, b8_report_value, [%3], %4, %5;\\n\\t"\n'
    '                 "selp.u32 %0, 1, 0, p;\\n\\tselp.u32 %1, 1, 0, q;\\n\\t"\n'
    '                 "cvt.u32.u8 %2, b8_report_value;\\n\\t}"\n'
    '                 : "=r"(done), "=r"(seen), "=r"(value)\n'
    '                 : "r"(a), "r"(parity), "r"(1000u) : "memory");\n'
    "    const bool wait_complete = done != 0;\n"
    "    const bool is_report_seen = seen != 0;\n"
    "    out[0] = wait_complete ? 1u : 0u;\n"
    "    out[1] = is_report_seen ? 1u : 0u;\n"
    "    out[2] = static_cast<std::uint8_t>(value);\n"
    '    asm volatile("{\\n\\t.reg .pred p, q;\\n\\t.reg .b8 b8_report_value;\\n\\t"\n'
    '                 "mbarrier.test_wait.phase_type::primary.b64"\n'
    '                 " p|q, b8_report_value, [%3], %4;"\n'
    '                 "\\n\\tselp.u32 %0, 1, 0, p;\\n\\tselp.u32 %1, 1, 0, q;\\n\\t"\n'
    '                 "cvt.u32.u8 %2, b8_report_value;\\n\\t}"\n'
    '                 : "=r"(done2), "=r"(seen2), "=r"(value2) : "l"(bar), "l"(state)\n'
    '                 : "memory");\n'
    "    out[3] = static_cast<std::uint8_t>(value2);")
REPORT_CASE = same_ptx.Case(
    "mbarrier.try_wait", "sm_90a",
    "std::uint64_t* bar, std::uint64_t state, std::uint32_t parity, std::uint32_t* out",
    REPORT_WRAPPER, REPORT_HAND)


def test_the_report_wrappers_return_the_b8_value_with_nvcc_13_5(tmp_path: Path) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    include = wrappers.snapshot_include(tmp_path)
    source = "#include <type_traits>\n" + same_ptx.source(REPORT_CASE)
    nvcc = toolkits.require("nvcc", "13.5")
    rc, out, kernels = wrappers.compile_tu(source, "sm_90a", tmp_path / "135", "cubin",
                                           include=include, exe=nvcc)
    assert rc == 0, out
    mine = same_ptx.normalized(kernels["wrapper"], "wrapper")
    waits = [re.sub(r"%\w+", "%r", ln) for ln in mine if ln.startswith("mbarrier.")]
    assert waits == [
        "mbarrier.try_wait.parity.phase_type::primary.acquire.cta.shared::cta.b64"
        " p|q, b8_report_value, [%r], %r, %r;",
        "mbarrier.test_wait.phase_type::primary.b64 p|q, b8_report_value, [%r], %r;",
    ], mine
    assert sum(1 for ln in mine if re.fullmatch(r"cvt\.u32\.u8 %r\d+, b8_report_value;", ln)) \
        == 2, mine
    # the same PTX and SASS as the hand-written asm
    assert mine == same_ptx.normalized(kernels["hand"], "hand")
    by_kernel = same_ptx.sass(tmp_path / "135" / "tu.cubin")
    assert by_kernel["wrapper"] == by_kernel["hand"] and len(by_kernel["wrapper"]) > 2
    # nvcc 13.0 writes .version 9.0: the wrapper refuses to emit the form (ptxas names why)
    alone = "#include <type_traits>\n" + same_ptx.source(replace(REPORT_CASE, hand=""))
    rc, out, _ = wrappers.compile_tu(alone, "sm_90a", tmp_path / "130", "cubin",
                                     include=include)
    assert rc != 0
    assert ("ptxgen_unsupported_target_mbarrier_try_wait_parity_primary_report_is_only_on"
            "_sm_90_and_later_from_ptx_isa_9_3") in out, out
