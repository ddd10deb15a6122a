"""The whole pipeline as functions the CLI (and tests) call:
load -> validate -> model (checked; with ``ptx_isa``, as of that version) -> emit -> write.

With ``ptx_isa``, the model is the spec as of that PTX ISA version
(:func:`ptxgen.model.versions.at`); the emitters get that model and do not know.
"""

from __future__ import annotations

from pathlib import Path

from ptxgen import manifest, validate
from ptxgen.emit import Files, render_all
from ptxgen.errors import SpecError
from ptxgen.load import Document, load_spec_dir_partial
from ptxgen.model import Spec, build_model, versions
from ptxgen.model.checks import check_model
from ptxgen.model.selection import with_selection
from ptxgen.write import check_output, diff_tree, existing_files, write_tree


def load_documents(spec_dir: Path) -> list[Document]:
    """Load and validate ``spec_dir``; raise SpecError with every problem found."""
    docs, errors = load_spec_dir_partial(spec_dir)
    validated = validate.check(docs)
    errors.extend(validated.errors)
    errors.extend(check_model(validated))
    if errors:
        raise SpecError(errors)
    return docs


def load_model(spec_dir: Path, ptx_isa: str | None = None) -> Spec:
    """Load and validate ``spec_dir``; raise SpecError with every problem found.

    With ``ptx_isa``, the model of the spec as of that PTX ISA version (see
    :mod:`ptxgen.model.versions`; :class:`ptxgen.model.versions.ViewError` for a
    version the spec does not list).
    """
    return model_of(load_documents(spec_dir), ptx_isa)


def model_of(docs: list[Document], ptx_isa: str | None = None) -> Spec:
    """The model of validated documents, or its view as of PTX ISA ``ptx_isa``."""
    spec = build_model(docs)
    return spec if ptx_isa is None else versions.at(spec, ptx_isa)


def render(spec_dir: Path, ptx_isa: str | None = None, select: str | None = None) -> Files:
    """Every output file, the manifest included, as bytes keyed by relative path. With
    ``select``, the C++ wrappers compile only the forms it selects
    (:mod:`ptxgen.model.selection`; SelectionError when it selects none)."""
    files = render_all(with_selection(load_model(spec_dir, ptx_isa), select))
    files[manifest.NAME] = manifest.build(
        files, manifest.input_digest(spec_dir, ptx_isa, select), ptx_isa, select)
    return files


def generate(spec_dir: Path, out_dir: Path, ptx_isa: str | None = None,
             select: str | None = None) -> Files:
    """Render everything in memory first; write (atomically) only if that succeeded.

    Raises :class:`ptxgen.write.OutputRefused` (before rendering, and again before
    writing) when ``out_dir`` may not be replaced: see :mod:`ptxgen.write`.
    """
    cwd = Path.cwd()
    check_output(out_dir, protect=(spec_dir,), cwd=cwd)
    files = render(spec_dir, ptx_isa, select)
    write_tree(out_dir, files, protect=(spec_dir,), cwd=cwd)
    return files


def check(spec_dir: Path, out_dir: Path, *, full: bool = False,
          ptx_isa: str | None = None, select: str | None = None) -> list[tuple[str, str]]:
    """(status, path) of every output file that differs from what generate would write.

    Unless ``full``, the manifest answers without rendering when no input changed
    (see :mod:`ptxgen.manifest`); a manifest that is missing, stale, edited or made
    for another PTX ISA view falls back to a full render and comparison.
    """
    if not full:
        have = existing_files(out_dir)
        quick = manifest.quick_diff(out_dir, spec_dir, have, ptx_isa, select)
        if quick is not None:
            return quick
    return diff_tree(out_dir, render(spec_dir, ptx_isa, select))
