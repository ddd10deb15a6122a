"""Issue 15: the PTX ISA 9.4 (sm_107) modes of cp.async.bulk.tensor, ``.mbarrier::report::*``
and ``.override::global_address``, against ptxas 13.0 / 13.5 and nvcc 13.0 / 13.5.

ptxas 13.5 assembles what the builders write on sm_107a / sm_107f from .version 9.4 and
refuses it on the other targets and before 9.4 with the messages the spec's gates quote;
ptxas 13.0 does not know the modifiers. ptxas accepts the modes with more forms than the
spec offers (rules report-subset / override-subset, recorded as leniencies): that is
checked too, so the rules stay a choice of ptxgen and not a claim about ptxas. The C++
wrappers write the same PTX (nvcc 13.5, sm_107a) and refuse the forms where nvcc 13.0
writes .version 9.0."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import toolkits
from cpp import harness
from ptxas import wrappers

from ptxgen.isa.ptx import PtxFormError, cp_async_bulk_tensor, support

_DECLS = ".reg .b32 r<8>;\n.reg .b64 rd<8>;\n.reg .b16 h<4>;\n.reg .pred p<2>;\n"
_LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
# written from the PTX ISA 9.4 syntax (report after .cta_group; the override address
# inside the tensor operand, after the map)
REPORT = (f"{_LOAD}.cta_group::1.mbarrier::report::validity::per_16bytes::80"
          " [r1], [rd1, {r2, r3}], [r4];")
DISABLED = ("cp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes"
            ".mbarrier::report::disabled [r1], [rd1, {r2, r3, r5}], [r4];")
OVERRIDE_LOAD = f"{_LOAD}.override::global_address [r1], [rd1, rd2, {{r2, r3}}], [r4];"
OVERRIDE_STORE = ("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group"
                  ".override::global_address [rd1, rd2, {r2, r3, r5, r6, r7}], [r4];")


def _assemble(ptxas: str, tmp_path: Path, body: str, target: str, version: str
              ) -> tuple[int, str]:
    return toolkits.assemble(ptxas, tmp_path, body, target, version, _DECLS)


def _builder_texts() -> list[str]:
    return [
        cp_async_bulk_tensor(dim="2d", dst="shared::cluster", src="global", load_mode="tile",
                             completion="mbarrier::complete_tx::bytes", cta_group="cta_group::1",
                             report="mbarrier::report::validity::per_16bytes::80",
                             dst_mem="r1", tensor=("rd1", ["r2", "r3"]), mbar="r4"),
        cp_async_bulk_tensor(dim="3d", dst="shared::cta", src="global", load_mode="tile",
                             completion="mbarrier::complete_tx::bytes",
                             report="mbarrier::report::disabled", dst_mem="r1",
                             tensor=("rd1", ["r2", "r3", "r5"]), mbar="r4"),
        cp_async_bulk_tensor(dim="2d", dst="shared::cluster", src="global", load_mode="tile",
                             completion="mbarrier::complete_tx::bytes", override=True,
                             dst_mem="r1", tensor=("rd1", ["r2", "r3"]), global_address="rd2",
                             mbar="r4"),
        cp_async_bulk_tensor(dim="2d", dst="global", src="shared::cta",
                             load_mode="tile::scatter4", completion="bulk_group", override=True,
                             tensor=("rd1", ["r2", "r3", "r5", "r6", "r7"]),
                             global_address="rd2", src_mem="r4"),
    ]


def test_the_builders_write_what_ptxas_13_5_assembles_on_sm_107_from_9_4(
        tmp_path: Path) -> None:
    texts = _builder_texts()
    assert texts == [REPORT, DISABLED, OVERRIDE_LOAD, OVERRIDE_STORE]
    ptxas = toolkits.require("ptxas", "13.5")
    for text in texts:
        for target in ("sm_107a", "sm_107f"):
            rc, out = _assemble(ptxas, tmp_path, text, target, "9.4")
            assert rc == 0, (target, text, out)


@pytest.mark.parametrize("text, feature", [
    (REPORT, "'.mbarrier::report::validity::per_16bytes::80'"),
    (DISABLED, "'.mbarrier::report::disabled'"),
    (OVERRIDE_LOAD, "'.override::global_address'"),
    (OVERRIDE_STORE, "'.override::global_address'"),
])
def test_ptxas_13_5_refuses_them_before_9_4_and_off_sm_107(
        tmp_path: Path, text: str, feature: str) -> None:
    ptxas = toolkits.require("ptxas", "13.5")
    rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "9.3")
    assert rc != 0 and f"Feature {feature} requires PTX ISA .version 9.4 or later" in out, out
    for target in ("sm_107", "sm_100a", "sm_100f", "sm_103a", "sm_110f", "sm_120a", "sm_90a"):
        rc, out = _assemble(ptxas, tmp_path, text, target, "9.5")
        if "override" in feature:
            space = ".shared::cluster" if text is OVERRIDE_LOAD else ".global"
            msg = (f"Feature '.override::global_address with destination state space as "
                   f"{space}' not supported on .target '{target}'")
        else:
            msg = (f"Illegal modifier {feature} for instruction 'cp.async.bulk.tensor', "
                   f"for arch '{target}'")
        assert rc != 0 and msg in out, (target, out)


def test_ptxas_13_0_does_not_know_them(tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", "13.0")
    for text, modifier in ((DISABLED, ".mbarrier::report::disabled"),
                           (OVERRIDE_STORE, ".override::global_address")):
        rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "9.0")
        assert rc != 0 and f"Unknown modifier '{modifier}'" in out, out


def test_the_spec_gates_are_ptxas_gates() -> None:
    for text in (REPORT, DISABLED, OVERRIDE_LOAD, OVERRIDE_STORE):
        lookup = support(text.split(" ")[0])
        assert lookup.valid and lookup.forms, lookup
        for f in lookup.forms:
            assert f.support.since == "9.4"
            assert f.support.targets == {"sm_107a", "sm_107f"}, f.support.targets


@pytest.mark.parametrize("kwargs, rule", [
    ({"cache_hint": True, "cache_policy": "rd3"}, "report modes on .tile loads"),
    ({"multicast": "multicast::cluster", "cta_mask": "h1"}, "report modes on .tile loads"),
])
def test_the_report_subset_is_ptxgens_choice_ptxas_accepts_more(
        tmp_path: Path, kwargs: dict[str, object], rule: str) -> None:
    args: dict[str, object] = {"dim": "2d", "dst": "shared::cluster", "src": "global",
                               "load_mode": "tile", "completion": "mbarrier::complete_tx::bytes",
                               "report": "mbarrier::report::disabled", "dst_mem": "r1",
                               "tensor": ("rd1", ["r2", "r3"]), "mbar": "r4", **kwargs}
    with pytest.raises(PtxFormError, match=re.escape(rule)):
        cp_async_bulk_tensor(**args)  # type: ignore[arg-type]
    # the same text, written by hand, assembles with ptxas 13.5
    mods = ".multicast::cluster" if "multicast" in kwargs else ""
    hint = ".L2::cache_hint" if "cache_hint" in kwargs else ""
    tail = ", h1" if mods else ", rd3"
    text = (f"{_LOAD}{mods}.mbarrier::report::disabled{hint} [r1], [rd1, {{r2, r3}}], "
            f"[r4]{tail};")
    rc, out = _assemble(toolkits.require("ptxas", "13.5"), tmp_path, text, "sm_107a", "9.4")
    assert rc == 0, (text, out)


def test_the_override_address_is_required_and_a_register(tmp_path: Path) -> None:
    base: dict[str, object] = {"dim": "2d", "dst": "global", "src": "shared::cta",
                               "load_mode": "tile", "completion": "bulk_group",
                               "override": True, "tensor": ("rd1", ["r2", "r3"]),
                               "src_mem": "r4"}
    with pytest.raises(PtxFormError, match="global_address"):
        cp_async_bulk_tensor(**base)  # type: ignore[arg-type]
    ptxas = toolkits.require("ptxas", "13.5")
    for bad in ("[rd1, {r2, r3}], [r4]", "[rd1, r2, {r2, r3}], [r4]"):
        text = ("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
                f".override::global_address {bad};")
        rc, out = _assemble(ptxas, tmp_path, text, "sm_107a", "9.4")
        assert rc != 0 and "Arguments mismatch for instruction 'cp.async.bulk.tensor'" in out


KERNEL = """#include <cstdint>
#include "ptxgen/ptx.hpp"

extern "C" __global__ void k(const void* tmap, std::uint64_t gaddr, int x, int y) {
    __shared__ alignas(128) unsigned char buf[1024];
    __shared__ std::uint64_t bar;
    using namespace ptxgen::ptx;
    const std::int32_t c[2] = {x, y};
    cp_async_bulk_tensor_load<cp_async_bulk_tensor_dim::dim_2d,
        cp_async_bulk_tensor_dst::shared_cluster, cp_async_bulk_tensor_load_mode::tile,
        cp_async_bulk_tensor_cta_group::cta_group_1, false,
        cp_async_bulk_tensor_report::mbarrier_report_validity_per_16bytes_80>(
        buf, tmap, c, &bar);
    cp_async_bulk_tensor_load_override<cp_async_bulk_tensor_dim::dim_2d,
        cp_async_bulk_tensor_dst::shared_cluster>(buf, tmap, c, gaddr, &bar);
    cp_async_bulk_tensor_store_override<cp_async_bulk_tensor_dim::dim_2d,
        cp_async_bulk_tensor_load_mode::tile>(tmap, c, gaddr, buf);
}
"""


def test_the_wrappers_write_them_with_nvcc_13_5(tmp_path: Path) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    include = wrappers.snapshot_include(tmp_path)
    body = wrappers.sm107_lines(KERNEL, tmp_path, ("cp.async.bulk.tensor",),
                                toolkits.require("nvcc", "13.5"), include)
    assert body == [
        f"{_LOAD}.cta_group::1.mbarrier::report::validity::per_16bytes::80"
        " [%r], [%rd, {%r, %r}], [%r];",
        f"{_LOAD}.override::global_address [%r], [%rd, %rd, {{%r, %r}}], [%r];",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.override::global_address"
        " [%rd, %rd, {%r, %r}], [%r];",
    ], body
    # nvcc 13.0 writes .version 9.0 (and has no sm_107): the forms exist from 9.4 only
    rc, out, _ = wrappers.compile_tu(KERNEL, "sm_100a", tmp_path / "130", "cubin",
                                     include=include)
    assert rc != 0
    assert "_from_ptx_isa_9_4" in out and "ptxgen_unsupported_target_cp_async_bulk_tensor" \
        in out, out
