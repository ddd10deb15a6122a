"""Issue 26: the wrappers refuse at compile time a form that the ISA allows but a recorded
deviation of the compiling toolkit's ptxas refuses (spec ``deviations:`` with
``toolkits:``), naming the deviation and a toolkit that accepts it.

The oracles: ptxas 13.0 and 13.5 on the refused forms themselves (the deviation is real),
nvcc 13.0 and 13.5 on one small TU each. nvcc ``-arch=sm_90a`` also runs a generic
``compute_90`` pass: a TU that includes every wrapper and calls another form of the same
wrapper must still build with 13.0. Four nvcc runs and two ptxas runs in all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import toolkits
from cpp import harness

from ptxgen import pipeline
from ptxgen.emit.cpp.wrappers.gating import toolkit_refusals
from ptxgen.model.instructions import Form, vkey

ROOT = Path(__file__).resolve().parent.parent

FLAGS = ("-std=c++17", f"-I{harness.INCLUDE}")
CALL = ("#include <ptxgen/{header}>\nusing namespace ptxgen::ptx;\n"
        "__global__ void k() {{ membar_proxy<membar_proxy_proxykind::{value}>(); }}\n")


@pytest.fixture(scope="module")
def refused() -> dict[tuple[str, str], Form]:
    """{(toolkit, opcode): the form} for every form a toolkit's deviation refuses."""
    out = {}
    for ins in pipeline.load_model(ROOT / "spec").instructions.instructions:
        for f in ins.forms:
            for cuda, _mask, _from, _msg in toolkit_refusals(ins, f):
                out[(f"{int(cuda) // 100}.{int(cuda) % 100}", f.opcode)] = f
    return out


def test_every_refusal_is_a_refusal_of_that_ptxas(refused: dict[tuple[str, str], Form],
                                                  tmp_path: Path) -> None:
    # the oracle: the toolkit's own ptxas refuses the form at the version it writes on a
    # target where the ISA has it, and the newest toolkit assembles it there
    assert ("13.0", "membar.proxy.async") in refused
    targets = next(iter(refused.values())).instruction.targets
    for (toolkit, opcode), f in sorted(refused.items()):
        version = targets.toolkit_version(toolkit)
        target = next(t for t, v in sorted(f.support.matrix(targets).items())
                      if vkey(v) <= vkey(version) and not t.endswith(("a", "f")))
        body = f"{opcode};" if not f.operands else None
        if body is None:
            continue  # the deviations recorded today are on operand-free forms
        rc, out = toolkits.assemble(toolkits.require("ptxas", toolkit), tmp_path, body,
                                    target, version)
        assert rc != 0, (toolkit, opcode, target)
        rc, out = toolkits.assemble(toolkits.require("ptxas", "13.5"), tmp_path, body,
                                    target, "9.5")
        assert rc == 0, out


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_nvcc_refuses_what_its_ptxas_refuses(release: str, tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(CALL.format(header="ptx/fence.hpp", value="proxykind_async"))
    proc = harness.run([toolkits.require("nvcc", release), *FLAGS, "-arch=sm_90a", "-cubin",
                        str(src), "-o", str(tmp_path / "k.cubin")], ok=release != "13.0")
    if release == "13.0":  # the wrapper's refusal, not ptxas's "Illegal modifier"
        text = proc.stdout + proc.stderr
        assert ("static assertion failed with \"ptxgen: membar.proxy: ptxas of CUDA 13.0 "
                "refuses membar.proxy.async on this target (spec deviation "
                "membar-proxy-async-13.0); CUDA 13.5 accepts it") in text, text
        assert "Illegal modifier" not in text


def test_other_forms_build_with_the_refusing_toolkit(tmp_path: Path) -> None:
    # every wrapper header, both device passes of -arch=sm_90a (the generic compute_90 one
    # too), the same wrapper with a form 13.0 assembles
    src = tmp_path / "k.cu"
    src.write_text(CALL.format(header="ptx.hpp", value="alias"))
    harness.run([toolkits.require("nvcc", "13.0"), *FLAGS, "-arch=sm_90a", "-c", str(src),
                 "-o", str(tmp_path / "k.o")])
