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
from functools import partial
from types import ModuleType

from ptxgen.emit import jobs as _jobs
from ptxgen.emit.templates import Files as Files
from ptxgen.model import Spec


def _emitters() -> list[ModuleType]:
    from ptxgen.emit.cpp import descriptor_rules, wrappers
    from ptxgen.emit.cpp import descriptors as cpp_descriptors
    from ptxgen.emit.cpp import tests as cpp_tests
    from ptxgen.emit.markdown import descriptors as markdown_descriptors
    from ptxgen.emit.markdown import instructions as markdown_instructions
    from ptxgen.emit.python import builders
    from ptxgen.emit.python import descriptors as python_descriptors
    from ptxgen.emit.python import tests as python_tests

    return [cpp_descriptors, cpp_tests, wrappers, descriptor_rules, python_descriptors,
            builders, python_tests, markdown_descriptors, markdown_instructions]


def render_all(spec: Spec, processes: int | None = None) -> Files:
    """Every output file of the model. An emitter with a ``parts`` function (the wrappers:
    one part per instruction file) is rendered in those parts; the parts and the other
    emitters run on ``processes`` processes (:mod:`ptxgen.emit.jobs`; default: every
    CPU): the other emitters first, then the parts, biggest first, so that the last
    jobs taken are small ones. The result does not depend on how many."""
    parts: list[tuple[int, Callable[[], Files]]] = []  # (weight, job)
    whole: list[Callable[[], Files]] = []
    for module in _emitters():
        if hasattr(module, "parts"):
            parts += module.parts(spec)
        else:
            whole.append(partial(module.emit, spec))
    parts.sort(key=lambda p: -p[0])  # stable: equal weights keep the emitter's order
    files: Files = {}
    for out in _jobs.run(whole + [job for _, job in parts], processes):
        for path, data in out.items():
            if path in files:
                raise RuntimeError(f"two emitters produce {path}")
            files[path] = data
    return dict(sorted(files.items()))
