"""Stage 4 - emit: one package of emitters (and one template folder) per output language.

* :mod:`ptxgen.emit.cpp` (``templates/cpp``): the descriptor headers, the instruction
  wrappers and their descriptor rules, and the C++ conformance tests;
* :mod:`ptxgen.emit.python` (``templates/python``): the descriptor classes, the
  instruction builders and the pytest tests of both;
* :mod:`ptxgen.emit.markdown` (``templates/markdown``): the reference documentation.

Each emitter turns the model into a view (plain data, already escaped for its
language) and hands it to thin Jinja templates that only loop and substitute.
:func:`render_all` returns every output file as bytes, keyed by its path
relative to the output folder; nothing is written here.
"""

from __future__ import annotations

from collections.abc import Callable

from ptxgen.emit.templates import Files as Files
from ptxgen.model import Spec


def _emitters() -> list[Callable[[Spec], Files]]:
    from ptxgen.emit.cpp import descriptor_rules, wrappers
    from ptxgen.emit.cpp import descriptors as cpp_descriptors
    from ptxgen.emit.cpp import tests as cpp_tests
    from ptxgen.emit.markdown import descriptors as markdown_descriptors
    from ptxgen.emit.markdown import instructions as markdown_instructions
    from ptxgen.emit.python import builders
    from ptxgen.emit.python import descriptors as python_descriptors
    from ptxgen.emit.python import tests as python_tests

    return [cpp_descriptors.emit, cpp_tests.emit, wrappers.emit, descriptor_rules.emit,
            python_descriptors.emit, builders.emit, python_tests.emit,
            markdown_descriptors.emit, markdown_instructions.emit]


def render_all(spec: Spec) -> Files:
    files: Files = {}
    for emit in _emitters():
        for path, data in emit(spec).items():
            if path in files:
                raise RuntimeError(f"two emitters produce {path}")
            files[path] = data
    return dict(sorted(files.items()))
