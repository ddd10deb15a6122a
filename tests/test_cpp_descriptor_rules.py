"""The C++ descriptor-rule checks (generated/include/ptxgen/ptx/descriptor_rules.hpp) give
the same answer as the Python ones (tests/test_instr_descriptor_rules.py) for every kind,
every combination of the qualifiers the rules name, and words around every rule's edge.
The program is compiled with g++ (host, constexpr) and with nvcc (in a kernel)."""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path

from cpp import harness
from cpp.harness import GXX_FLAGS, NVCC_FLAGS

from ptxgen.emit.cpp.wrappers import enum_name, member_ident
from ptxgen.isa import DESCRIPTORS, DescriptorError, descriptor_class, ptx
from ptxgen.model.instructions import TRUE

INS = ptx.instruction_set().get("tcgen05_mma")
NAMES = ("cta_group", "kind", "ws", "sp", "scale_vectorsize", "ashift")  # the wrappers' order


def words(kind: str) -> list[int]:
    """Valid words of every sparsity, each (M, N) of a set around the edges of the shape
    tables that the kind has, both K dimensions where the kind has one, and one word the
    descriptor refuses."""
    # .kind::ti16 has only the sm107 layout (sm_107a/f; per target: test_idesc_targets.py)
    cls = descriptor_class("instr_desc", kind, None if kind in DESCRIPTORS["instr_desc"]
                           else "sm_107a")
    names = {f.name for f in cls.FIELDS}
    base = {f.name: min(f.names.values()) for f in cls.FIELDS if f.names}
    out = []
    shapes = itertools.product((32, 64, 128, 256, 384), (8, 16, 24, 32, 48, 64, 96, 256))
    for sparse, (m, n), k in itertools.product((0, 1), shapes, (0, 1)):
        if k and "k_dim" not in names:
            continue
        fields = {**base, "sparsity": sparse, "m": m, "n": n}
        if "k_dim" in names:
            fields["k_dim"] = k
        table = getattr(cls, "SHAPES", None)  # .kind::ti16 has no shape table
        if table is None or table.allows(m, n):
            try:
                out.append(cls(**fields).encode())
            except DescriptorError:  # .kind::ti16's k_dim is only 0
                continue
    out.append(0xFFFFFFFF)
    return out


def python_rule(params: dict[str, str], word: int) -> str:
    kind = params["kind"]
    try:
        fields = ptx._decoder(None)("instr_desc", kind, word)
    except ValueError:
        return "invalid"
    problems = INS.descriptor_problems(params, "idesc", fields)
    return problems[0].rsplit("[", 1)[1].rstrip("]") if problems else "ok"


def cases() -> list[tuple[dict[str, str], int]]:
    doms = [INS.qualifier(n).domain for n in NAMES]
    out = []
    for values in itertools.product(*doms):
        # .decompress::lut::b (PTX ISA 9.4) is the checker's last qualifier, left out here
        params = {**dict(zip(NAMES, values, strict=True)), "decompress": "false"}
        out += [(params, w) for w in words(params["kind"])]
    return out


def cpp_arg(name: str, value: str) -> str:
    q = INS.qualifier(name)
    if q.flag:
        return "true" if value == TRUE else "false"
    if q.numeric:
        return value
    return f"ptxgen::ptx::{enum_name(INS, q)}::{member_ident(q, value)}"


def program(all_cases: list[tuple[dict[str, str], int]]) -> str:
    """A program printing the C++ rule's answer for each case, in order: one call of the
    checker per qualifier combination, over an array of the combination's words (a line
    per case would make the compiler, not the checker, the cost)."""
    lines = ['#include <cstdio>', '#include <cstring>',
             '#include "ptxgen/ptx/descriptor_rules.hpp"',
             'static const char* id(const char* m) {',
             '  if (!m) return "ok";',
             '  if (std::strstr(m, "not a valid")) return "invalid";',
             '  return std::strrchr(m, \'[\') + 1;', '}',
             'int main() {']
    runs: list[tuple[str, list[int]]] = []
    for params, w in all_cases:
        targs = ", ".join(cpp_arg(n, params[n]) for n in NAMES)
        if not runs or runs[-1][0] != targs:
            runs.append((targs, []))
        runs[-1][1].append(w)
    for i, (targs, ws) in enumerate(runs):
        arr = ", ".join(f"{w:#x}u" for w in ws)
        lines.append(f"  static const unsigned w{i}[] = {{{arr}}};")
        lines.append(f"  for (unsigned w : w{i}) "
                     f"std::puts(id(ptxgen::ptx::tcgen05_mma_idesc_problem<{targs}>(w)));")
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def expected(all_cases: list[tuple[dict[str, str], int]]) -> list[str]:
    return [python_rule(p, w) for p, w in all_cases]


def cpp_ids(out: str) -> list[str]:
    return [line.rstrip("]") for line in out.splitlines()]


def test_cpp_and_python_agree_host(tmp_path: Path) -> None:
    if not harness.has("g++"):
        harness.unavailable("g++")
    all_cases = cases()
    want = expected(all_cases)
    assert {"ok", "invalid", "ashift-m", "sp-sparse-idesc", "dense-idesc",
            "scale-vec-k", "shape-cta-group-1", "shape-cta-group-2", "shape-i8-cta-group-1",
            "shape-i8-cta-group-2", "shape-ws", "shape-ws-sp", "shape-block-scaled-cta-group-1",
            "shape-block-scaled-cta-group-2-sp"} <= set(want), set(want)
    src = tmp_path / "rules.cpp"
    src.write_text(program(all_cases))
    exe = tmp_path / "rules"
    harness.run(["g++", *GXX_FLAGS, str(src), "-o", str(exe)])
    got = cpp_ids(subprocess.run([str(exe)], capture_output=True, text=True,
                                 check=True).stdout)
    assert got == want


def test_cpp_checks_are_constexpr_on_the_device(tmp_path: Path) -> None:
    """In a kernel built for sm_100a, a static_assert on an idesc built with the
    generated constexpr encoder (and a refusal of a wrong one)."""
    nvcc = harness.tool("nvcc")
    body = r"""
#include "ptxgen/ptx/descriptor_rules.hpp"
#include "ptxgen/instr_desc.hpp"
using namespace ptxgen::ptx;
constexpr auto desc = ptxgen::InstrDescF16{}.with_dtype(ptxgen::InstrDescF16::Dtype::F32)
    .with_m(M_VALUE).with_n(64);
static_assert(tcgen05_mma_idesc_problem<CTA_GROUP, tcgen05_mma_kind::f16, false, false,
              tcgen05_mma_scale_vectorsize::none, true>(desc.encode()) == nullptr,
              "ashift with this M");
__global__ void k(unsigned* out) { out[0] = desc.encode(); }
"""
    src = tmp_path / "k.cu"
    src.write_text(body)
    # .ashift needs M = 128 or 256; .cta_group::1 takes M = 64 or 128, ::2 128 or 256
    for m, cta_group, ok in ((128, 1, True), (256, 2, True), (64, 1, False), (256, 1, False)):
        proc = harness.run([nvcc, *NVCC_FLAGS, harness.gencode("sm_100a"), f"-DM_VALUE={m}",
                            f"-DCTA_GROUP={cta_group}", "-ptx", str(src), "-o",
                            str(tmp_path / "k.ptx")], ok=ok)
        if not ok:
            assert proc.returncode != 0
            assert re.search(r"static assertion failed with \"ashift with this M\"",
                             proc.stdout + proc.stderr), proc.stdout + proc.stderr
