"""The generated C++ wrappers (generated/include/ptxgen/ptx) compiled with nvcc.

* The value forms of every instruction (ptxgen.probe.covering.value_forms: every
  qualifier value, every support; the pairs of values are ptxas's, in the conformance
  matrix) are called, a kernel per form, and compiled (with code generation) once, in one
  translation unit per (toolkit, target) that has the forms; the PTX of each kernel must
  hold exactly the form's instruction.
* For every target nvcc 13.0 knows (all of the spec's but sm_101*), a sample of the forms
  the target has must compile - including sm_100f, sm_103a and sm_110a, and although
  nvcc's generic compute_XX pass of an sm_XXa / sm_XXf build sees no
  architecture-specific macros - and a sample of those it lacks must fail, in ptxas, with
  "Unresolved extern function 'ptxgen_unsupported_target_...'" naming the targets that
  have the form. Each target's sample holds one form of every support signature (the
  targets a refusal names) it has / lacks, and every (wrapper, support signature) is in
  the sample of one target that has it and of one that lacks it.
* PTXGEN_FULL_MATRIX=1 (benchmarks/full_matrices.py) compiles the whole matrix instead:
  every form of an instruction of up to COVER_ABOVE forms (the covering array of the
  larger ones), and one form per (wrapper, support signature) on every target.
* Invalid qualifier combinations fail with the spec's rule as a
  static_assert message.
* nvcc 13.5 (the test dependency nvidia-cuda-nvcc, tests/toolkits.py) compiles
  a sample of supported forms (chosen as for 13.0) for every target of the spec, the
  sm_107 family (new in CUDA 13.4) included with every wrapper it has, with both device
  passes (-fatbin: the generic compute_XX one too) for the a / f targets.

nvcc is required in CI (CI=true); elsewhere the tests skip without it.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import toolkits
from ptxas import wrappers

from ptxgen.emit.cpp.wrappers import wrapper_calls
from ptxgen.isa import ptx
from ptxgen.model.instructions import vkey
from ptxgen.probe.covering import covering_forms, value_forms

ISET = ptx.instruction_set()
TARGETS = ISET.targets
NVCC_TARGETS = [t.name for t in TARGETS.targets if t.nvcc]
# nvcc 13.0 knows the targets of PTX ISA 9.0 (not sm_107*, new in 13.4)
NVCC13_0_TARGETS = [t.name for t in TARGETS.for_toolkit("13.0").targets if t.nvcc]
#: Form keys that more than one instruction has (mov.b64 copies a register, packs two and
#: unpacks into two: mov_value, mov_pack, mov_unpack): named "KEY @INSTRUCTION-ID" here.
SHARED_KEYS = {k for k, n in Counter(f.key for ins in ISET.instructions
                                     for f in ins.forms).items() if n > 1}


def _call_key(ins_id: str, key: str) -> str:
    return f"{key} @{ins_id}" if key in SHARED_KEYS else key


CALLS: dict[str, dict[str, Any]] = {
    _call_key(ins.id, k): v for ins in ISET.instructions for k, v in wrapper_calls(ins).items()}
HOMES = ("sm_100a", "sm_90a", "sm_120a")  # cover every form with few translation units
#: The whole matrix (benchmarks/full_matrices.py), not CI's covering sample.
FULL = os.environ.get("PTXGEN_FULL_MATRIX") == "1"
COVER_ABOVE = 1500  # forms of an instruction beyond which its covering array (FULL)
#: The forms compiled: CI's, each instruction's value forms (every value of every
#: parameter, every support: ptxgen.probe.covering.value_forms); FULL, every form (the
#: covering array of the largest instructions).
COVERED = {_call_key(ins.id, f.key) for ins in ISET.instructions
           for f in (value_forms(ins) if not FULL else covering_forms(ins)
                     if len(ins.forms) > COVER_ABOVE else ins.forms)}
CHUNK = 900 if FULL else 4000  # kernels per coverage translation unit


def _supported(call: Mapping[str, Any], target: str, version: str | None = None) -> bool:
    """Whether the wrapper emits the form (the ISA's support at the version nvcc writes)."""
    return bool(call["form"].support.supported(TARGETS, target, version or TARGETS.newest))


def _assembles(call: Mapping[str, Any], target: str, version: str | None = None) -> bool:
    """Whether the wrapper emits the form and the ptxas of the toolkit that writes ``version``
    (13.0 for ``V13_0``, else 13.5) assembles it: a deviation the spec records for that
    toolkit (``membar-proxy-async-13.0``: ptxas 13.0 refuses membar.proxy.async at every
    version it reads) takes the form out of that toolkit's builds (nvcc 13.5 builds it)."""
    toolkit = "13.0" if version == V13_0 else "13.5"
    return _supported(call, target, version) and bool(call["form"].support_for(toolkit).supported(
        TARGETS, target, version or TARGETS.newest))


def _side(call: Mapping[str, Any], target: str, version: str | None, supported: bool) -> bool:
    """A form of the supported builds (the toolkit assembles it) or of the refused ones (the
    wrapper refuses it); a form the wrapper emits but the toolkit refuses is in neither."""
    return _assembles(call, target, version) if supported else not _supported(call, target, version)


#: The targets of each wrapper's forms, by its refusal ``any_form_error`` (named after the
#: wrapper), at any version.
WRAPPER_TARGETS: dict[str, set[str]] = {}
for _call in CALLS.values():
    WRAPPER_TARGETS.setdefault(_call["any_form_error"], set()).update(
        _call["form"].support.targets)


def _wrapper_has_a_form(call: Mapping[str, Any], target: str) -> bool:
    """Whether any form of the call's wrapper has ``target``: else the device pass sees one
    declaration per wrapper name, whose refusal names every target of
    the wrapper's forms."""
    return target in WRAPPER_TARGETS[call["any_form_error"]]


def _expected_refusal(call: Mapping[str, Any], target: str) -> str:
    return str(call["error"] if _wrapper_has_a_form(call, target) else call["any_form_error"])


# nvcc 13.0 writes PTX ISA 9.0: forms of later versions (.ignore_oob, .add.noftz.f32, ...)
# are built with nvcc 13.5
V13_0 = max(TARGETS.for_toolkit("13.0").versions, key=vkey)


def _coverage_units() -> list[tuple[str, str, list[str]]]:
    """(nvcc release, home target, forms) of the translation units that cover every form."""
    by_home: dict[tuple[str, str], list[str]] = {}
    for key, call in CALLS.items():
        if key not in COVERED:
            continue
        home = next((("13.0", t) for t in (*HOMES, *NVCC13_0_TARGETS)
                     if _assembles(call, t, V13_0)), None)
        home = home or next((("13.5", t) for t in (*HOMES, *NVCC_TARGETS)
                             if _assembles(call, t)), None)
        assert home is not None, f"{key}: no target nvcc can build it for"
        by_home.setdefault(home, []).append(key)
    units = []
    for (release, home), keys in by_home.items():
        units += [(release, home, keys[i:i + CHUNK]) for i in range(0, len(keys), CHUNK)]
    return units


def _signature(call: Mapping[str, Any]) -> str:
    """The targets (and PTX ISA version) a form's refusal names: its support signature."""
    return str(call["error"].split("_is_only_on_")[1])


def _full_samples(target: str, supported: bool, version: str | None = None) -> list[str]:
    """One form per (wrapper function, support signature), supported there or not."""
    seen: dict[tuple[str, str], str] = {}
    for key, call in CALLS.items():
        if _side(call, target, version, supported):
            seen.setdefault((call["function"], call["error"]), key)
    return list(seen.values())


@functools.cache
def _spread(targets: tuple[str, ...], supported: bool,
            version: str | None) -> dict[str, tuple[str, ...]]:
    """{target: forms}: every (wrapper function, support signature) given to one of the
    targets where it is supported (or not), in turn, so that no target takes them all."""
    out: dict[str, list[str]] = {t: [] for t in targets}
    firsts: dict[tuple[str, str], str] = {}
    for key, call in CALLS.items():
        firsts.setdefault((call["function"], call["error"]), key)
    for i, (_, key) in enumerate(sorted(firsts.items())):
        where = [t for t in targets if _side(CALLS[key], t, version, supported)]
        if where:
            out[where[i % len(where)]].append(key)
    return {t: tuple(keys) for t, keys in out.items()}


def _samples(target: str, supported: bool, version: str | None = None,
             targets: tuple[str, ...] = ()) -> list[str]:
    """The forms built for ``target`` (supported there or not; ``targets``: the toolkit's):
    one per support signature (and, where unsupported, per whether the wrapper has a form
    there: the refusal differs), and the target's share of the (wrapper, signature)
    pairs; on the sm_107 targets (new in CUDA 13.4) one per wrapper too. FULL: one per
    (wrapper function, support signature)."""
    if FULL:
        return _full_samples(target, supported, version)
    seen: dict[tuple[str, ...], str] = {}
    for key, call in CALLS.items():
        if not _side(call, target, version, supported):
            continue
        seen.setdefault((_signature(call), str(_wrapper_has_a_form(call, target))), key)
        if target.startswith("sm_107") and supported:
            seen.setdefault((call["function"],), key)
    keys = list(seen.values())
    shared = set(keys)
    keys += [k for k in _spread(targets, supported, version)[target] if k not in shared]
    return keys


def _tu(keys: list[str]) -> str:
    return wrappers.translation_unit([(f"k{i}", CALLS[k]) for i, k in enumerate(keys)])


def _errors(out: str) -> str:
    """The end of a failed build's output without ptxas's advisories ("info    : Advisory:
    ... .sp::ordered_metadata ..." on every mma.sp, not errors), which would hide the error."""
    return "\n".join(ln for ln in out.splitlines() if "info    : Advisory" not in ln)[-3000:]


def _opcode_lines(kernel_ptx: str, opcode: str) -> list[str]:
    """The form's own statements: the lines of the wrapper's inline asm with its opcode (the
    compiler's code around the asm is not the form's: nvcc packs and unpacks a .b128 operand
    with mov.b128 of its own)."""
    return [ln for ln in wrappers.asm_instructions_in(kernel_ptx)
            if ln == f"{opcode};" or ln.startswith(f"{opcode} ")]


VERSION_FORM = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"
INVALID = {
    "tcgen05_mma<1, ptxgen::ptx::tcgen05_mma_kind::mxf8f6f4>(d, a, b, i, p)":
        ".kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4 need .block_scale",
    "tcgen05_mma<1, ptxgen::ptx::tcgen05_mma_kind::f16, true>(d, a, b, i, p)":
        ".ashift needs the A matrix in Tensor Memory",
    "tcgen05_mma_tmem<1, ptxgen::ptx::tcgen05_mma_kind::f16, true, "
    "ptxgen::ptx::tcgen05_mma_collector_usage::a_fill>(d, t, b, i, p)":
        ".collector::a::fill and .collector::a::use cannot be combined with .ashift",
    "tcgen05_mma<1, ptxgen::ptx::tcgen05_mma_kind::i8>(d, a, b, i, p, ptxgen::ptx::imm<3>)":
        "scale-input-d is only valid with .kind::f16 and .kind::tf32",
    "tcgen05_mma<2, ptxgen::ptx::tcgen05_mma_kind::f16>(d, a, b, i, p, ptxgen::ptx::imm<16>)":
        "immediate scale_input_d is out of range",
    "tcgen05_mma_block_scale<1, ptxgen::ptx::tcgen05_mma_kind::mxf4nvf4>(d, a, b, i, s, s, p)":
        ".kind::mxf4nvf4 needs an explicit .scale_vectorsize",
    # .cta_group::2 takes 8 lanes: a static_assert naming the operand, with the numbers
    "tcgen05_mma<2, ptxgen::ptx::tcgen05_mma_kind::f16>(d, a, b, i, lanes4, p)":
        "operand disable_output_lane: the array has PtxgenGiven elements where this form "
        "needs PtxgenNeeded",
    # ptxas 13.0: "value '2' out of range, expected to be in range [0..1]" (m16n8k32 .f16)
    "mma_sp<ptxgen::ptx::mma_sp_shape::m16n8k32, ptxgen::ptx::mma_sp_dtype::f16, "
    "ptxgen::ptx::mma_sp_atype::f16, ptxgen::ptx::mma_sp_btype::f16, "
    "ptxgen::ptx::mma_sp_ctype::f16>(r2, lanes4, lanes4, r2, s, ptxgen::ptx::imm<2>)":
        "mma.sp.sync.aligned: immediate sp_sel is out of range for this form",
}


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    if wrappers.nvcc() is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc (CUDA 13.0) is required to compile the wrappers in CI")
        pytest.skip("nvcc is not on PATH")
    return _build_all()


@functools.cache
def _build_all() -> dict[str, Any]:
    """Every build of this file, once per process (a module fixture set up again - the
    module's tests not run in a row - does not build again)."""
    tmp = Path(tempfile.mkdtemp(prefix="ptxgen-nvcc-"))
    include = wrappers.snapshot_include(tmp)
    # (target, source, kernels' forms, nvcc mode): whole builds (-c) where nvcc runs
    # the generic pass too (the a / f targets), device-only builds elsewhere.
    jobs: dict[str, tuple[str, str, list[str], str]] = {}
    for i, (release, home, keys) in enumerate(_coverage_units()):
        tag = "coverage" if release == "13.0" else "coverage13.5"
        jobs[f"{tag} {i} {home}"] = (home, _tu(keys), keys, "cubin")
    nvcc135 = toolkits.require("nvcc", "13.5")
    for t in NVCC_TARGETS:
        specific = TARGETS.get(t).suffix != ""
        keys = _samples(t, True, targets=tuple(NVCC_TARGETS))
        jobs[f"ok13.5 {t}"] = (t, _tu(keys), keys, "fatbin" if specific else "cubin")
    for t in NVCC13_0_TARGETS:
        specific = TARGETS.get(t).suffix != ""
        for supported in (True, False):
            keys = _samples(t, supported, V13_0, tuple(NVCC13_0_TARGETS))
            if keys:  # one whole build (-c): the host compiler sees the headers too
                mode = "fatbin" if supported and specific else "cubin"
                mode = "c" if supported and t == "sm_100a" else mode
                jobs[f"{'ok' if supported else 'bad'} {t}"] = (t, _tu(keys), keys, mode)
    invalid = ['#include "ptxgen/ptx.hpp"',
               "__global__ void k(std::uint32_t d, std::uint64_t a, std::uint64_t b, "
               "std::uint32_t t, std::uint32_t i, std::uint32_t s, bool p, "
               "const std::uint32_t* l) {",
               "    std::uint32_t lanes4[4] = {l[0], l[1], l[2], l[3]};",
               "    std::uint32_t r2[2] = {l[0], l[1]};"]
    invalid += [f"    ptxgen::ptx::{call};" for call in INVALID] + ["}"]
    jobs["invalid sm_100a"] = ("sm_100a", "\n".join(invalid) + "\n", [], "cubin")
    # .block32 needs PTX ISA 8.8: refused when the toolkit is declared to emit 8.7.
    jobs["version sm_100a"] = ("sm_100a", _tu([VERSION_FORM]), [VERSION_FORM], "cubin")

    def run(name: str) -> tuple[str, tuple[int, str, dict[str, str]]]:
        arch, source, _, mode = jobs[name]
        extra = ["-DPTXGEN_PTX_ISA_VERSION=87"] if name.startswith("version") else []
        exe = nvcc135 if name.startswith(("ok13.5", "coverage13.5")) else None
        return name, wrappers.compile_tu(source, arch, tmp / re.sub(r"\W", "_", name), mode,
                                         extra, include=include, exe=exe)

    order = sorted(jobs, key=lambda n: -len(jobs[n][2]) - 300 * (jobs[n][3] == "fatbin"))
    with ThreadPoolExecutor(max_workers=wrappers.jobs()) as pool:
        done = dict(pool.map(run, order))
    return {"jobs": jobs, "done": done}


def test_every_form_compiles_and_emits_its_instruction(results: dict[str, Any]) -> None:
    covered = 0
    for name, (_, _, keys, _) in results["jobs"].items():
        if not name.startswith("coverage"):
            continue
        rc, out, ptx_by_kernel = results["done"][name]
        assert rc == 0, f"{name}:\n{_errors(out)}"
        for i, key in enumerate(keys):
            lines = _opcode_lines(ptx_by_kernel[f"k{i}"], CALLS[key]["opcode"])
            assert len(lines) == 1, f"{key}: {wrappers.instructions_in(ptx_by_kernel[f'k{i}'])}"
            covered += 1
    assert covered == len(COVERED)
    assert len(CALLS) == sum(len(i.forms) for i in ISET.instructions)


@pytest.mark.parametrize("target", NVCC13_0_TARGETS)
def test_supported_forms_compile_on_every_target(results: dict[str, Any], target: str) -> None:
    name = f"ok {target}"
    if name not in results["jobs"]:
        pytest.fail(f"no form is supported on {target}")
    rc, out, ptx_by_kernel = results["done"][name]
    assert rc == 0, _errors(out)
    for i, key in enumerate(results["jobs"][name][2]):
        assert len(_opcode_lines(ptx_by_kernel[f"k{i}"], CALLS[key]["opcode"])) == 1, key


@pytest.mark.parametrize("target", NVCC_TARGETS)
def test_nvcc_13_5_compiles_the_supported_forms_on_every_target(results: dict[str, Any],
                                                                target: str) -> None:
    """nvcc 13.5: a kernel per (wrapper, support signature) the target has, sm_107* too."""
    rc, out, ptx_by_kernel = results["done"][f"ok13.5 {target}"]
    assert rc == 0, _errors(out)
    keys = results["jobs"][f"ok13.5 {target}"][2]
    assert keys
    for i, key in enumerate(keys):
        assert len(_opcode_lines(ptx_by_kernel[f"k{i}"], CALLS[key]["opcode"])) == 1, key


def test_nvcc_13_5_covers_every_wrapper_on_the_sm_107_targets(results: dict[str, Any]) -> None:
    """Every wrapper that has a form on sm_107a / sm_107f is among the kernels built."""
    for t in ("sm_107a", "sm_107f"):
        built = {CALLS[k]["function"] for k in results["jobs"][f"ok13.5 {t}"][2]}
        want = {c["function"] for c in CALLS.values() if _supported(c, t)}
        assert built == want and "ptxgen::ptx::tcgen05_mma" in built, t


@pytest.mark.parametrize("target", NVCC13_0_TARGETS)
def test_unsupported_forms_fail_naming_the_targets(results: dict[str, Any], target: str) -> None:
    name = f"bad {target}"
    rc, out, ptx_by_kernel = results["done"][name]
    assert rc != 0
    m = re.search(r"Unresolved extern function '(ptxgen_unsupported_target_\w+)'", out)
    assert m, out[-3000:]
    keys = results["jobs"][name][2]
    assert m.group(1) in {_expected_refusal(CALLS[k], target) for k in keys}
    for i, key in enumerate(keys):
        call = CALLS[key]
        kernel = ptx_by_kernel[f"k{i}"]
        error = _expected_refusal(call, target)
        assert error in kernel, key
        assert not _opcode_lines(kernel, call["opcode"]), key
        # The name says where the form is supported (where every form of the wrapper is,
        # on a target without a form of the file).
        sup = call["form"].support
        named = error.split("_is_only_on_")[1]
        assert all(t in named for t in sup.targets if not named.startswith("sm_")
                   or "_and_later" not in named), (key, named)


def test_invalid_combinations_fail_with_the_rule(results: dict[str, Any]) -> None:
    rc, out, _ = results["done"]["invalid sm_100a"]
    assert rc != 0
    for call, message in INVALID.items():
        assert message in out, (call, out[-4000:])


def test_the_ptx_isa_version_gates_too(results: dict[str, Any]) -> None:
    rc, out, _ = results["done"]["version sm_100a"]
    assert rc != 0
    assert re.search(r"Unresolved extern function 'ptxgen_unsupported_target_tcgen05_mma_block_"
                     r"scale_is_only_on_\w+_from_ptx_isa_8_8'", out), out[-2000:]
