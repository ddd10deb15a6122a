"""Issue 15: the PTX ISA 9.4 (sm_107) overrides of the tensor copies, against ptxas 13.0 /
13.5 and nvcc 13.0 / 13.5: ``.override::global_dim`` (1d) / ``.override::global_dim_stride``
(2d-5d) of cp.async.bulk.tensor, whose sizes and strides are written inside the tensor
operand ([tensorMap, globalAddress, {sizes}, {lowerStrides}, upperStride, {coords}]), and
``.override::global_address`` (with the dims too) of cp.async.bulk.prefetch.tensor and
cp.reduce.async.bulk.tensor (note override-dims).

ptxas 13.5 assembles what the builders write on sm_107a / sm_107f from .version 9.4 and
refuses it before 9.4 and on the other targets with the messages the spec's gates quote;
ptxas 13.0 does not know the modifiers. Each rule taken from ptxas is checked twice: the
builder refuses the form, and ptxas 13.5 refuses the same text with the message the rule's
provenance quotes. The subsets (rules override-subset) are ptxgen's choice: ptxas accepts
the forms left out. The C++ wrappers write the same PTX (nvcc 13.5, sm_107a) and refuse
the forms where nvcc 13.0 writes .version 9.0."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import toolkits
from cpp import harness
from ptxas import wrappers

from ptxgen.isa.ptx import (
    PtxFormError,
    cp_async_bulk_prefetch_tensor,
    cp_async_bulk_tensor,
    cp_reduce_async_bulk_tensor,
    support,
)

_DECLS = ".reg .b32 r<12>;\n.reg .b64 rd<8>;\n.reg .b16 h<8>;\n.reg .pred p<2>;\n"
_LOAD = "cp.async.bulk.tensor.{}.global.tile.mbarrier::complete_tx::bytes"
_DS = ".override::global_address.override::global_dim_stride"
_D = ".override::global_address.override::global_dim"

# written by hand from the probed syntax (note override-dims)
LOAD_DS = (_LOAD.format("2d.shared::cluster") + ".cta_group::1" + _DS
           + " [r1], [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3}], [r4];")
LOAD_D = _LOAD.format("1d.shared::cta") + _D + " [r1], [rd1, rd2, {h1}, {r2}], [r4];"
STORE_DS = ("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group" + _DS
            + " [rd1, rd2, {h1, h2, h4}, {r5, r6}, h3, {r2, r3, r7}], [r4];")
STORE_D = ("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group" + _D
           + " [rd1, rd2, {h1}, {r2}], [r4];")
PREFETCH = ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile.override::global_address"
            " [rd1, rd2, {r2, r3}];")
PREFETCH_DS = ("cp.async.bulk.prefetch.tensor.4d.L2.global.tile" + _DS
               + " [rd1, rd2, {h1, h2, h4, h5}, {r5, r6, r7}, h3, {r2, r3, r8, r9}];")
REDUCE = ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile"
          ".override::global_address.bulk_group [rd1, rd2, {r2, r3}], [r4];")
REDUCE_D = ("cp.reduce.async.bulk.tensor.1d.global.shared::cta.xor.tile" + _D
            + ".bulk_group [rd1, rd2, {h1}, {r2}], [r4];")
REDUCE_DS = ("cp.reduce.async.bulk.tensor.5d.global.shared::cta.min.tile" + _DS
             + ".bulk_group [rd1, rd2, {h1, h2, h4, h5, h6}, {r5, r6, r7, r8}, h3,"
             " {r2, r3, r9, r10, r11}], [r4];")
TEXTS = [LOAD_DS, LOAD_D, STORE_DS, STORE_D, PREFETCH, PREFETCH_DS, REDUCE, REDUCE_D,
         REDUCE_DS]
_LOAD_ARGS: dict[str, Any] = {"src": "global", "load_mode": "tile",
                              "completion": "mbarrier::complete_tx::bytes", "override": True,
                              "dst_mem": "r1", "global_address": "rd2", "mbar": "r4"}
_STORE_ARGS: dict[str, Any] = {"dst": "global", "src": "shared::cta", "load_mode": "tile",
                               "completion": "bulk_group", "override": True,
                               "global_address": "rd2", "src_mem": "r4"}


def _assemble(ptxas: str, tmp_path: Path, body: str, target: str, version: str
              ) -> tuple[int, str]:
    return toolkits.assemble(ptxas, tmp_path, body, target, version, _DECLS)


def _builder_texts() -> list[str]:
    return [
        cp_async_bulk_tensor(dim="2d", dst="shared::cluster", cta_group="cta_group::1",
                             override_dims="global_dim_stride", tensor=("rd1", ["r2", "r3"]),
                             tensor_sizes=["h1", "h2"], lower_strides=["r5"],
                             upper_stride="h3", **_LOAD_ARGS),
        cp_async_bulk_tensor(dim="1d", dst="shared::cta", override_dims="global_dim",
                             tensor=("rd1", ["r2"]), tensor_sizes=["h1"], **_LOAD_ARGS),
        cp_async_bulk_tensor(dim="3d", override_dims="global_dim_stride",
                             tensor=("rd1", ["r2", "r3", "r7"]), tensor_sizes=["h1", "h2", "h4"],
                             lower_strides=["r5", "r6"], upper_stride="h3", **_STORE_ARGS),
        cp_async_bulk_tensor(dim="1d", override_dims="global_dim", tensor=("rd1", ["r2"]),
                             tensor_sizes=["h1"], **_STORE_ARGS),
        cp_async_bulk_prefetch_tensor(dim="2d", load_mode="tile", override=True,
                                      tensor=("rd1", ["r2", "r3"]), global_address="rd2"),
        cp_async_bulk_prefetch_tensor(dim="4d", load_mode="tile", override=True,
                                      override_dims="global_dim_stride",
                                      tensor=("rd1", ["r2", "r3", "r8", "r9"]),
                                      global_address="rd2", tensor_sizes=["h1", "h2", "h4", "h5"],
                                      lower_strides=["r5", "r6", "r7"], upper_stride="h3"),
        cp_reduce_async_bulk_tensor(dim="2d", redop="add", load_mode="tile", override=True,
                                    tensor=("rd1", ["r2", "r3"]), global_address="rd2",
                                    src_mem="r4"),
        cp_reduce_async_bulk_tensor(dim="1d", redop="xor", load_mode="tile", override=True,
                                    override_dims="global_dim", tensor=("rd1", ["r2"]),
                                    global_address="rd2", tensor_sizes=["h1"], src_mem="r4"),
        cp_reduce_async_bulk_tensor(dim="5d", redop="min", load_mode="tile", override=True,
                                    override_dims="global_dim_stride",
                                    tensor=("rd1", ["r2", "r3", "r9", "r10", "r11"]),
                                    global_address="rd2",
                                    tensor_sizes=["h1", "h2", "h4", "h5", "h6"],
                                    lower_strides=["r5", "r6", "r7", "r8"], upper_stride="h3",
                                    src_mem="r4"),
    ]


def test_the_builders_write_what_ptxas_13_5_assembles_on_sm_107_from_9_4(
        tmp_path: Path) -> None:
    assert _builder_texts() == TEXTS
    ptxas = toolkits.require("ptxas", "13.5")
    for text in TEXTS:
        for target in ("sm_107a", "sm_107f"):
            rc, out = _assemble(ptxas, tmp_path, text, target, "9.4")
            assert rc == 0, (target, text, out)


def _feature(text: str) -> tuple[str, str]:
    """The gate's modifier (the dims if there are any) and what ptxas's message names it
    with: the destination state space of a copy, or the instruction."""
    mod = next(m for m in (".override::global_dim_stride", ".override::global_dim",
                           ".override::global_address") if m + " " in text or m + "." in text)
    if text.startswith("cp.async.bulk.tensor"):
        space = ".global" if ".global.shared::cta" in text else \
            ".shared::cluster" if "shared::cluster" in text else ".shared::cta"
        return mod, f"destination state space as {space}"
    return mod, text.split(".1d")[0].split(".2d")[0].split(".4d")[0].split(".5d")[0]


@pytest.mark.parametrize("text", TEXTS)
def test_ptxas_13_5_refuses_them_before_9_4_and_off_sm_107(tmp_path: Path, text: str) -> None:
    ptxas = toolkits.require("ptxas", "13.5")
    mod, where = _feature(text)
    rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "9.3")
    assert rc != 0 and f"Feature '{mod}' requires PTX ISA .version 9.4 or later" in out, out
    for target in ("sm_107", "sm_100a", "sm_100f", "sm_110f", "sm_120a", "sm_90a"):
        rc, out = _assemble(ptxas, tmp_path, text, target, "9.5")
        msg = f"Feature '{mod} with {where}' not supported on .target '{target}'"
        assert rc != 0 and msg in out, (target, msg, out)


def test_ptxas_13_0_does_not_know_them(tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", "13.0")
    for text in TEXTS:
        rc, out = _assemble(ptxas, tmp_path, text, "sm_100a", "9.0")
        mod, _ = _feature(text)
        assert rc != 0 and f"Unknown modifier '{mod}'" in out, out


def test_the_spec_gates_are_ptxas_gates() -> None:
    for text in TEXTS:
        lookup = support(text.split(" ")[0])
        assert lookup.valid and lookup.forms, (text, lookup)
        for f in lookup.forms:
            assert f.support.since == "9.4"
            assert f.support.targets == {"sm_107a", "sm_107f"}, f.support.targets


# (builder, its arguments, the text ptxas refuses, ptxgen's message, ptxas 13.5's message)
RULES: list[tuple[Any, dict[str, Any], str, str, str]] = [
    (cp_async_bulk_tensor,
     {"dim": "2d", "dst": "shared::cta", "override_dims": "global_dim",
      "tensor": ("rd1", ["r2", "r3"]), "tensor_sizes": ["h1", "h2"], **_LOAD_ARGS},
     _LOAD.format("2d.shared::cta") + _D + " [r1], [rd1, rd2, {h1, h2}, {r2, r3}], [r4];",
     ".override::global_dim is the 1d form",
     "Illegal modifier '.override::global_dim' for instruction 'cp.async.bulk.tensor' "
     "with '.2d'"),
    (cp_async_bulk_tensor,
     {"dim": "1d", "override_dims": "global_dim_stride", "tensor": ("rd1", ["r2"]),
      "tensor_sizes": ["h1"], "lower_strides": ["r5"], "upper_stride": "h3", **_STORE_ARGS},
     "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group" + _DS
     + " [rd1, rd2, {h1}, {r5}, h3, {r2}], [r4];",
     ".override::global_dim_stride needs 2d to 5d",
     "Illegal modifier '.override::global_dim_stride' for instruction 'cp.async.bulk.tensor' "
     "with '.1d'"),
    (cp_async_bulk_tensor,
     {"dim": "2d", "dst": "global", "src": "shared::cta", "load_mode": "tile",
      "completion": "bulk_group", "override_dims": "global_dim_stride", "src_mem": "r4",
      "tensor": ("rd1", ["r2", "r3"]), "tensor_sizes": ["h1", "h2"], "lower_strides": ["r5"],
      "upper_stride": "h3"},
     "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.override::global_dim_stride"
     " [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3}], [r4];",
     "need .override::global_address",
     "Illegal modifier '.override::global_dim_stride' for instruction 'cp.async.bulk.tensor'"
     "\n"),
    (cp_async_bulk_tensor,
     {"dim": "2d", "dst": "shared::cluster", **_LOAD_ARGS, "load_mode": "tile::gather4",
      "override_dims": "global_dim_stride", "tensor": ("rd1", ["r2", "r3", "r5", "r6", "r7"]),
      "tensor_sizes": ["h1", "h2"], "lower_strides": ["r5"], "upper_stride": "h3"},
     "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4"
     ".mbarrier::complete_tx::bytes" + _DS
     + " [r1], [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3, r5, r6, r7}], [r4];",
     "go with .tile only",
     "Illegal modifier '.override::global_dim_stride' for instruction 'cp.async.bulk.tensor' "
     "with '.tile::gather4'"),
    (cp_async_bulk_tensor,
     {"dim": "2d", "dst": "shared::cluster", "multicast": "multicast::cluster",
      "cta_mask": "3", "override_dims": "global_dim_stride", "tensor": ("rd1", ["r2", "r3"]),
      "tensor_sizes": ["h1", "h2"], "lower_strides": ["r5"], "upper_stride": "h3",
      **_LOAD_ARGS},
     _LOAD.format("2d.shared::cluster") + ".multicast::cluster" + _DS
     + " [r1], [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3}], [r4], 3;",
     "not the 16-bit .multicast::cluster",
     "Illegal modifier '.override::global_dim_stride' for instruction 'cp.async.bulk.tensor' "
     "with '.multicast::cluster'"),
    (cp_async_bulk_prefetch_tensor,
     {"dim": "2d", "load_mode": "tile", "override": True, "override_dims": "global_dim",
      "tensor": ("rd1", ["r2", "r3"]), "global_address": "rd2", "tensor_sizes": ["h1", "h2"]},
     "cp.async.bulk.prefetch.tensor.2d.L2.global.tile" + _D
     + " [rd1, rd2, {h1, h2}, {r2, r3}];",
     ".override::global_dim is the 1d form",
     "Illegal modifier '.override::global_dim' for instruction 'cp.async.bulk.prefetch.tensor' "
     "with '.2d'"),
    (cp_async_bulk_prefetch_tensor,
     {"dim": "3d", "load_mode": "im2col", "override": True, "override_dims": "global_dim_stride",
      "tensor": ("rd1", ["r2", "r3", "r7"]), "global_address": "rd2",
      "tensor_sizes": ["h1", "h2", "h4"], "lower_strides": ["r5", "r6"], "upper_stride": "h3",
      "im2col_offsets": ["h5"]},
     "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col" + _DS
     + " [rd1, rd2, {h1, h2, h4}, {r5, r6}, h3, {r2, r3, r7}];",  # offsets left out
     "go with .tile only",
     "Illegal modifier '.override::global_dim_stride' for instruction "
     "'cp.async.bulk.prefetch.tensor' with '.im2col'"),
    (cp_reduce_async_bulk_tensor,
     {"dim": "2d", "redop": "add", "load_mode": "tile::scatter4", "override": True,
      "override_dims": "global_dim_stride", "tensor": ("rd1", ["r2", "r3", "r5", "r6", "r7"]),
      "global_address": "rd2", "tensor_sizes": ["h1", "h2"], "lower_strides": ["r5"],
      "upper_stride": "h3", "src_mem": "r4"},
     "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile::scatter4" + _DS
     + ".bulk_group [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3, r5, r6, r7}], [r4];",
     "go with .tile only",
     "Illegal modifier '.override::global_dim_stride' for instruction "
     "'cp.reduce.async.bulk.tensor' with '.tile::scatter4'"),
    (cp_reduce_async_bulk_tensor,
     {"dim": "2d", "redop": "add", "load_mode": "tile", "override_dims": "global_dim_stride",
      "tensor": ("rd1", ["r2", "r3"]), "tensor_sizes": ["h1", "h2"], "lower_strides": ["r5"],
      "upper_stride": "h3", "src_mem": "r4"},
     "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.override::global_dim_stride"
     ".bulk_group [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3}], [r4];",
     "need .override::global_address",
     "Illegal modifier '.override::global_dim_stride' for instruction "
     "'cp.reduce.async.bulk.tensor'\n"),
]


@pytest.mark.parametrize("builder, kwargs, text, rule, message", RULES)
def test_each_rule_from_ptxas_is_a_ptxas_refusal(
        tmp_path: Path, builder: Any, kwargs: dict[str, Any], text: str, rule: str,
        message: str) -> None:
    with pytest.raises(PtxFormError, match=re.escape(rule)):
        builder(**kwargs)
    rc, out = _assemble(toolkits.require("ptxas", "13.5"), tmp_path, text, "sm_107a", "9.4")
    assert rc != 0 and message in out + "\n", (text, out)


# the subsets: ptxgen refuses them (rules override-subset), ptxas 13.5 assembles them
SUBSET: list[tuple[Any, dict[str, Any], str]] = [
    (cp_async_bulk_tensor,
     {"dim": "2d", "dst": "shared::cluster", "multicast": "multicast::cluster::32b",
      "cta_mask": "r8", "override_dims": "global_dim_stride", "tensor": ("rd1", ["r2", "r3"]),
      "tensor_sizes": ["h1", "h2"], "lower_strides": ["r5"], "upper_stride": "h3",
      **_LOAD_ARGS},
     _LOAD.format("2d.shared::cluster") + ".multicast::cluster::32b" + _DS
     + " [r1], [rd1, rd2, {h1, h2}, {r5}, h3, {r2, r3}], [r4], r8;"),
    (cp_async_bulk_tensor,
     {"dim": "1d", "override_dims": "global_dim", "cache_hint": True, "cache_policy": "rd3",
      "tensor": ("rd1", ["r2"]), "tensor_sizes": ["h1"], **_STORE_ARGS},
     "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group.L2::cache_hint" + _D
     + " [rd1, rd2, {h1}, {r2}], [r4], rd3;"),
    (cp_async_bulk_prefetch_tensor,
     {"dim": "2d", "load_mode": "tile::gather4", "override": True,
      "tensor": ("rd1", ["r2", "r3", "r5", "r6", "r7"]), "global_address": "rd2"},
     "cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4.override::global_address"
     " [rd1, rd2, {r2, r3, r5, r6, r7}];"),
    (cp_async_bulk_prefetch_tensor,
     {"dim": "2d", "load_mode": "tile", "hint": "L2::evict_last", "override": True,
      "tensor": ("rd1", ["r2", "r3"]), "global_address": "rd2"},
     "cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::evict_last.override::global_address"
     " [rd1, rd2, {r2, r3}];"),
    (cp_reduce_async_bulk_tensor,
     {"dim": "3d", "redop": "max", "load_mode": "im2col_no_offs", "override": True,
      "tensor": ("rd1", ["r2", "r3", "r5"]), "global_address": "rd2", "src_mem": "r4"},
     "cp.reduce.async.bulk.tensor.3d.global.shared::cta.max.im2col_no_offs"
     ".override::global_address.bulk_group [rd1, rd2, {r2, r3, r5}], [r4];"),
    (cp_reduce_async_bulk_tensor,
     {"dim": "2d", "redop": "or", "load_mode": "tile", "override": True, "cache_hint": True,
      "cache_policy": "rd3", "tensor": ("rd1", ["r2", "r3"]), "global_address": "rd2",
      "src_mem": "r4"},
     "cp.reduce.async.bulk.tensor.2d.global.shared::cta.or.tile.override::global_address"
     ".bulk_group.L2::cache_hint [rd1, rd2, {r2, r3}], [r4], rd3;"),
]


@pytest.mark.parametrize("builder, kwargs, text", SUBSET)
def test_the_override_subsets_are_ptxgens_choice_ptxas_accepts_more(
        tmp_path: Path, builder: Any, kwargs: dict[str, Any], text: str) -> None:
    with pytest.raises(PtxFormError, match=re.escape("ptxgen offers .override::global_address on")):
        builder(**kwargs)
    rc, out = _assemble(toolkits.require("ptxas", "13.5"), tmp_path, text, "sm_107a", "9.4")
    assert rc == 0, (text, out)


def test_the_operand_types_are_ptxas_types(tmp_path: Path) -> None:
    """16-bit sizes, 32-bit lower strides, one 16-bit upper stride register; the sizes'
    count is the dimension and the lower strides' one less."""
    ptxas = toolkits.require("ptxas", "13.5")
    head = _LOAD.format("3d.shared::cta") + _DS + " [r1], [rd1, rd2, "
    for ops, message in (
            ("{r5, r6, r7}, {r5, r6}, h3", "Arguments mismatch"),  # 32-bit sizes
            ("{h1, h2, h4}, {h5, h6}, h3", "Arguments mismatch"),  # 16-bit lower strides
            ("{h1, h2, h4}, {r5, r6}, r7", "Arguments mismatch"),  # 32-bit upper stride
            ("{h1, h2, h4}, {r5, r6}, 7", "Parsing error near '7'"),  # immediate upper stride
            ("{h1, h2}, {r5, r6}, h3", "Argument 3 of instruction 'cp.async.bulk.tensor': "
                                       "Argument vector size mismatch"),
            ("{h1, h2, h4}, {r5}, h3", "Argument 4 of instruction 'cp.async.bulk.tensor': "
                                       "Argument vector size mismatch")):
        rc, out = _assemble(ptxas, tmp_path, f"{head}{ops}, {{r2, r3, r4}}], [r4];",
                            "sm_107a", "9.4")
        assert rc != 0 and message in out, (ops, out)
    rc, out = _assemble(ptxas, tmp_path, f"{head}{{h1, h2, h4}}, {{r5, r6}}, h3, {{r2, r3, r4}}]"
                        ", [r4];", "sm_107a", "9.4")
    assert rc == 0, out


KERNEL = """#include <cstdint>
#include "ptxgen/ptx.hpp"

extern "C" __global__ void k(const void* tmap, std::uint64_t gaddr, int x, int y,
                             std::uint16_t w, std::uint16_t h, std::uint32_t ls,
                             std::uint16_t us) {
    __shared__ alignas(128) unsigned char buf[1024];
    __shared__ std::uint64_t bar;
    using namespace ptxgen::ptx;
    const std::int32_t c1[1] = {x};
    const std::int32_t c2[2] = {x, y};
    const std::uint16_t s1[1] = {w};
    const std::uint16_t s2[2] = {w, h};
    const std::uint32_t l2[1] = {ls};
    cp_async_bulk_tensor_load_override_dim_stride<cp_async_bulk_tensor_dim::dim_2d,
        cp_async_bulk_tensor_dst::shared_cluster, cp_async_bulk_tensor_cta_group::cta_group_1>(
        buf, tmap, c2, gaddr, s2, l2, us, &bar);
    cp_async_bulk_tensor_load_override_dim<cp_async_bulk_tensor_dst::shared_cta>(
        buf, tmap, c1, gaddr, s1, &bar);
    cp_async_bulk_tensor_store_override_dim_stride<cp_async_bulk_tensor_dim::dim_2d>(
        tmap, c2, gaddr, s2, l2, us, buf);
    cp_async_bulk_prefetch_tensor_override<cp_async_bulk_prefetch_tensor_dim::dim_2d>(
        tmap, c2, gaddr);
    cp_async_bulk_prefetch_tensor_override_dim(tmap, c1, gaddr, s1);
    cp_reduce_async_bulk_tensor_override<cp_reduce_async_bulk_tensor_dim::dim_2d,
        cp_reduce_async_bulk_tensor_redop::add>(tmap, c2, gaddr, buf);
    cp_reduce_async_bulk_tensor_override_dim_stride<cp_reduce_async_bulk_tensor_dim::dim_2d,
        cp_reduce_async_bulk_tensor_redop::redop_xor>(tmap, c2, gaddr, s2, l2, us, buf);
}
"""


def test_the_wrappers_write_them_with_nvcc_13_5(tmp_path: Path) -> None:
    if wrappers.nvcc() is None:
        harness.unavailable("nvcc")
    include = wrappers.snapshot_include(tmp_path)
    body = wrappers.sm107_lines(KERNEL, tmp_path, ("cp.async.bulk.", "cp.reduce.async.bulk."),
                                toolkits.require("nvcc", "13.5"), include)
    assert body == [
        _LOAD.format("2d.shared::cluster") + ".cta_group::1" + _DS
        + " [%r], [%rd, %rd, {%rs, %rs}, {%r}, %rs, {%r, %r}], [%r];",
        _LOAD.format("1d.shared::cta") + _D + " [%r], [%rd, %rd, {%rs}, {%r}], [%r];",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" + _DS
        + " [%rd, %rd, {%rs, %rs}, {%r}, %rs, {%r, %r}], [%r];",
        "cp.async.bulk.prefetch.tensor.2d.L2.global.tile.override::global_address"
        " [%rd, %rd, {%r, %r}];",
        "cp.async.bulk.prefetch.tensor.1d.L2.global.tile" + _D + " [%rd, %rd, {%rs}, {%r}];",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.override::global_address"
        ".bulk_group [%rd, %rd, {%r, %r}], [%r];",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.xor.tile" + _DS
        + ".bulk_group [%rd, %rd, {%rs, %rs}, {%r}, %rs, {%r, %r}], [%r];",
    ], body
    # nvcc 13.0 writes .version 9.0 (and has no sm_107): the forms exist from 9.4 only.
    # ptxas stops at the first unresolved function, so one family at a time.
    head, calls = KERNEL.split("    cp_async_bulk_tensor_load_override_dim_stride", 1)
    calls = "    cp_async_bulk_tensor_load_override_dim_stride" + calls
    for family, name in (("cp_async_bulk_tensor_", "cp_async_bulk_tensor_load_override_dim"
                          "_stride"),
                         ("cp_async_bulk_prefetch_", "cp_async_bulk_prefetch_tensor_override"),
                         ("cp_reduce_", "cp_reduce_async_bulk_tensor_override")):
        mine = [c for c in calls.split(";\n") if c.strip().startswith(family)]
        src = head + "".join(c + ";\n" for c in mine) + "}\n"
        rc, out, _ = wrappers.compile_tu(src, "sm_100a", tmp_path / f"130{family}", "cubin",
                                         include=include)
        assert rc != 0 and (f"ptxgen_unsupported_target_{name}_is_only_on_sm_107a_sm_107f_"
                            "from_ptx_isa_9_4") in out, out


@pytest.mark.parametrize("operand, kind", [("src_mem", "address"), ("im2col_w", "vector")])
def test_validate_refuses_a_misplaced_in_tensor_operand(tmp_path: Path, operand: str,
                                                        kind: str) -> None:
    """in_tensor: a register or vector right after the tensor operand or another in_tensor
    operand (src_mem follows upper_stride but is an address; im2col_w follows
    im2col_offsets)."""
    import shutil

    from ptxgen import pipeline
    from ptxgen.errors import SpecError

    spec = Path(__file__).resolve().parent.parent / "spec"
    dst = tmp_path / "spec"
    (dst / "instructions").mkdir(parents=True)
    shutil.copy(spec / "targets.yaml", dst / "targets.yaml")
    shutil.copytree(spec / "schema", dst / "schema")
    text = (spec / "instructions" / "cp_async_bulk_tensor.yaml").read_text()
    old = f"      - name: {operand}\n        kind: {kind}\n"
    assert text.count(old) >= 1, old
    (dst / "instructions" / "cp_async_bulk_tensor.yaml").write_text(
        text.replace(old, old + "        in_tensor: true\n", 1))
    with pytest.raises(SpecError) as info:
        pipeline.load_model(dst)
    assert any(f"in_tensor operand {operand!r} must be an input register or vector" in str(d)
               for d in info.value.diagnostics), info.value.diagnostics
