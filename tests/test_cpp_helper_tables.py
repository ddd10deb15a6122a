"""The wrappers' constexpr helpers, which look their answers up in packed tables (the
combination boxes of ``detail::box_of``, the register counts by combination and
qualifier), against the model, for every form of every instruction:

* ``<id>_count_<operand>`` is the form's register count of that array operand
  (``Form.operands``, derived from the spec by the model, not by the emitter);
* ``<id>_combination`` is the same number for the forms of one spec combination and a
  different one for forms of different combinations, and never -1 for a form.

Each is a ``static_assert`` in one host translation unit (g++, every helper visible with
``PTXGEN_PTX_EXACT_HOST_DECLARATIONS``): the compiler evaluates the tables as a user's
build does.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from cpp import harness
from cpp.harness import INCLUDE

from ptxgen import pipeline
from ptxgen.emit.cpp.wrappers import _Cond

ROOT = Path(__file__).resolve().parent.parent
HELPER = re.compile(r"PTXGEN_PTX_CONSTEXPR int (\w+)\(([^)]*)\)")


def _helpers(stem: str) -> dict[str, int]:
    """{helper name: its parameter count} of a family's headers."""
    text = "".join((INCLUDE / "ptxgen" / "ptx" / f"{stem}{part}.hpp").read_text()
                   for part in ("", ".device"))
    return {m.group(1): m.group(2).count(",") + 1 for m in HELPER.finditer(text)}


def test_the_helper_tables_answer_as_the_model_for_every_form(tmp_path: Path) -> None:
    spec = pipeline.load_model(ROOT / "spec")
    lines = ['#include "ptxgen/ptx.hpp"', "namespace ptxgen::ptx::detail {"]
    counts = combinations = 0
    for ins in spec.instructions.instructions:
        helpers = _helpers(ins.spec_file.rsplit("/", 1)[-1].removesuffix(".yaml"))
        quals = ins.qualifiers
        value = _Cond(ins, {}, {}).value
        combo = f"{ins.id}_combination"
        number: dict[int, str] = {}  # id of a spec combination: a form's call of the helper
        for f in ins.forms:
            args = ", ".join(value(q, f.params[q.name]) for q in quals)
            for u in f.operands:
                name = f"{ins.id}_count_{u.name}"
                if u.count is not None and helpers.get(name) == len(quals):
                    lines.append(f"static_assert({name}({args}) == {u.count}, "
                                 f"\"{f.key}: {u.name}\");")
                    counts += 1
            if combo in helpers and ins.combinations:
                call = f"{combo}({args})"
                lines.append(f"static_assert({call} >= 0, \"{f.key}\");")
                first = number.setdefault(id(f.combination), call)
                lines.append(f"static_assert({call} == {first}, \"{f.key}\");")
                combinations += 1
        firsts = list(number.values())
        for i, a in enumerate(firsts):  # different combinations, different numbers
            for b in firsts[i + 1:]:
                lines.append(f"static_assert({a} != {b}, \"{ins.id}\");")
    lines.append("}")
    # every family with array operands counted by a helper is in the test
    assert counts > 2000 and combinations > 100, (counts, combinations)
    src = tmp_path / "helpers.cpp"
    src.write_text("\n".join(lines) + "\n")
    res = subprocess.run([harness.tool("g++"), "-std=c++17", "-fsyntax-only",
                          "-DPTXGEN_PTX_EXACT_HOST_DECLARATIONS", f"-I{INCLUDE}", str(src)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
