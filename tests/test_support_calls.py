"""``ptxgen support`` names the C++ wrapper call and the Python builder call of a form
(``ptxgen.model.calls``), held against the builders themselves (the Python call, run,
renders the form's text) and against the generated headers (the wrapper exists and its
template parameters are declared in the order the call names them)."""

from __future__ import annotations

import re
import subprocess
import sys

import ptxgen
from conftest import ROOT
from ptxgen.isa import ptx
from ptxgen.model import instructions as engine
from ptxgen.model.calls import calls_for, wrapper_of
from ptxgen.names import camel

ISET = ptx.instruction_set()


def one_form_per_wrapper() -> list[engine.Form]:
    out: dict[str, engine.Form] = {}
    for ins in ISET.instructions:
        for f in ins.forms:
            w = wrapper_of(f)
            key = f"{ins.name}:{w.name if w else ''}:{f.variant_text}"
            out.setdefault(key, f)
    return list(out.values())


FORMS = one_form_per_wrapper()


def test_python_call_renders_the_form() -> None:
    assert len(FORMS) > 60
    for f in FORMS:
        calls = calls_for(f)
        if calls is None:
            continue
        args, _ = engine.sample(f)
        quals = {q.name for q in f.instruction.qualifiers}
        names = {k: v for k, v in args.items() if k not in quals}
        got = eval(calls.python, {"ptxgen": ptxgen, **names})
        assert got == engine.build(f.instruction, args), calls.python


def _declared(wrapper: str, header: str) -> list[list[str]]:
    """The template parameter names of each declaration of ``wrapper`` in ``header``."""
    out = []
    for m in re.finditer(r"template <([^\n]*)>\nPTXGEN_PTX_DEVICE [^\n]*?\b" + wrapper + r"\(",
                         header):
        if m.group(1).startswith("auto..."):  # a refusing declaration (another target)
            continue
        params = [p.split("=")[0].split()[-1] for p in m.group(1).split(", ")
                  if not p.startswith(("auto...", "class ", "decltype"))]
        out.append(params)
    return out


def test_cpp_call_names_the_declared_template_parameters_in_order() -> None:
    headers = "\n".join(p.read_text() for p in (ROOT / "generated/include/ptxgen/ptx")
                        .glob("*.device.hpp"))
    for f in FORMS:
        calls = calls_for(f)
        if calls is None:
            continue
        named = re.findall(r"/\*(\w+)=\*/", calls.cpp.split(">(")[0]) if "<" in calls.cpp \
            else []
        expected = ["Ptxgen" + camel(n) for n in named]
        decls = _declared(calls.wrapper, headers)
        if not decls:  # not a template: declared once, called without template arguments
            assert re.search(r"PTXGEN_PTX_DEVICE [^\n]*?\b" + calls.wrapper + r"\(", headers), \
                calls.wrapper
            decls = [[]]
        assert expected in decls, (calls.cpp, decls)


def test_support_prints_the_calls() -> None:
    out = subprocess.run([sys.executable, "-m", "ptxgen", "support",
                          "ldmatrix.sync.aligned.x2.m8n8.shared.b16"],
                         capture_output=True, text=True, check=True).stdout
    assert ("  C++:    ptxgen::ptx::ldmatrix</*shape=*/ldmatrix_shape::m8n8, "
            "/*num=*/ldmatrix_num::x2, /*type=*/ldmatrix_type::b16, /*trans=*/false, "
            "/*ss=*/ldmatrix_ss::shared>(/*d=*/d, /*p=*/p);") in out
    assert ('  Python: ptxgen.isa.ptx.ldmatrix(shape="m8n8", num="x2", ss="shared", '
            'type="b16", d=d, p=p)') in out
