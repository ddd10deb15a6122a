"""Issue 26: the kernel ISA's compute and warp families (cvt, arith, math, bits, warp, misc).

* A gate's ``later`` (targets that have a feature only from a later PTX ISA version than
  the gate's ``since``): cvt .e4m3x2 is on sm_90 from 7.8 but on sm_89 from 8.1. ``ptxgen
  support`` answers per target, and ptxas 13.0 and 13.5 agree at exactly those versions.
* A ``later`` naming no target of spec/targets.yaml is a spec error (file:line:col).
* ptxas 13.0's early cvt .e2m1x2.f16x2 (its recorded deviation): ``ptxgen support
  --toolkit 13.0`` answers with it, and ptxas 13.0 assembles it where that says.
* The whole matrix of these families is checked by generated/tests/test_ptxas_conformance.py.

The toolkits (tests/toolkits.py) are required in CI (CI=true); elsewhere the tests skip
without them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import toolkits

from conftest import run_cli

F8 = "cvt.rn.satfinite.e4m3x2.f32"
F8_BODY = ".reg .b16 h;\n.reg .f32 f<2>;\ncvt.rn.satfinite.e4m3x2.f32 h, f0, f1;"
E2M1_BODY = ".reg .b8 c;\n.reg .b32 r;\ncvt.rn.satfinite.e2m1x2.f16x2 c, r;"


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _support(*args: str) -> dict[str, str]:
    res = run_cli("support", *args, "--json")
    assert res.code == 0, res.err
    support: dict[str, str] = json.loads(res.out)["support"]
    return support


def test_support_answers_per_target_with_later() -> None:
    support = _support(F8)
    assert support["sm_89"] == "8.1"
    assert support["sm_90"] == "7.8"
    assert support["sm_90a"] == "8.0"  # sm_90a exists from 8.0
    assert run_cli("support", F8, "--target", "sm_89", "--ptx-isa", "8.0").code == 1
    assert run_cli("support", F8, "--target", "sm_90", "--ptx-isa", "7.8").code == 0


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_ptxas_agrees_with_later(release: str, tmp_path: Path) -> None:
    ptxas = toolkits.require("ptxas", release)
    # (target, version, assembles): the first version of each target and the one before
    for target, version, ok in [("sm_89", "8.0", False), ("sm_89", "8.1", True),
                                ("sm_90", "7.8", True), ("sm_88", "9.0", False)]:
        rc, out = toolkits.assemble(ptxas, tmp_path, F8_BODY, target, version, decls="")
        assert (rc == 0) == ok, f"{release} {target}@{version}: {out}"
        support = _support(F8)
        assert (target in support and _v(version) >= _v(support[target])) == ok


def test_later_names_a_known_target(spec_copy: Path) -> None:
    cvt = spec_copy / "instructions" / "cvt.yaml"
    text = cvt.read_text()
    assert text.count("later: {sm_89: \"8.1\"}") == 2
    cvt.write_text(text.replace("later: {sm_89: \"8.1\"}", "later: {sm_87a: \"8.1\"}", 1))
    res = run_cli("validate", "--spec", str(spec_copy))
    assert res.code == 2
    assert "cvt.yaml:" in res.err and "no target 'sm_87a'" in res.err


def test_the_13_0_deviation_is_ptxas_13_0_s(tmp_path: Path) -> None:
    isa = _support("cvt.rn.satfinite.e2m1x2.f16x2")
    old = _support("cvt.rn.satfinite.e2m1x2.f16x2", "--toolkit", "13.0")
    assert isa["sm_100a"] == "9.1" and isa["sm_120a"] == "9.1"
    assert old["sm_100a"] == "8.6" and old["sm_120a"] == "8.7"
    for release, target, version in [("13.0", "sm_100a", "8.6"), ("13.0", "sm_120a", "8.8"),
                                     ("13.5", "sm_100a", "9.0"), ("13.5", "sm_100a", "9.1")]:
        rc, out = toolkits.assemble(toolkits.require("ptxas", release), tmp_path, E2M1_BODY,
                                    target, version, decls="")
        support = old if release == "13.0" else isa
        expected = target in support and _v(version) >= _v(support[target])
        assert (rc == 0) == expected, f"{release} {target}@{version}: {out}"
