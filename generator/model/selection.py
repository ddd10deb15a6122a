"""The forms a generation compiles into the C++ wrappers (``ptxgen generate --select``).

A selection is a regular expression searched in each form's PTX opcode (and its key):
``--select 'm64n(128|256)k16\\.f32\\.bf16'``. The model keeps every form (the docs, the
Python builders and ``ptxgen support`` still describe the whole spec); the C++ emitter
writes the asm statements of the selected forms only, and a wrapper called with the
qualifiers of a form outside the selection fails to compile with a ``static_assert``
naming the selection. A selection that is not a valid expression, or that selects no
form, is refused.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ptxgen.model import Spec
    from ptxgen.model.instructions import Form


class SelectionError(ValueError):
    """A --select pattern that is not a regular expression or selects no form."""


def compiled(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise SelectionError(f"--select {pattern!r}: not a regular expression: {exc}") from None


def selects(pattern: str | None, form: Form) -> bool:
    """Whether a selection (None: every form) keeps a form."""
    if pattern is None:
        return True
    rx = compiled(pattern)
    return rx.search(form.opcode) is not None or rx.search(form.key) is not None


def with_selection(spec: Spec, pattern: str | None) -> Spec:
    """The spec with the C++ wrappers restricted to the forms ``pattern`` selects."""
    if pattern is None:
        return spec
    compiled(pattern)
    iset = spec.instructions
    if iset is None or not any(selects(pattern, f) for i in iset.instructions for f in i.forms):
        raise SelectionError(f"--select {pattern!r} selects no instruction form "
                             "(it is searched in each form's opcode, e.g. "
                             "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16)")
    return replace(spec, select=pattern)
