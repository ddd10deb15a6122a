"""The whole pipeline as functions the CLI (and tests) call:
load -> validate -> model -> emit -> write."""

from __future__ import annotations

from pathlib import Path

from ptxgen import manifest
from ptxgen.emit import Files, render_all
from ptxgen.errors import SpecError
from ptxgen.load import load_spec_dir_partial
from ptxgen.model import Spec, build_model
from ptxgen.validate import validate
from ptxgen.write import diff_tree, existing_files, write_tree


def load_model(spec_dir: Path) -> Spec:
    """Load and validate ``spec_dir``; raise SpecError with every problem found."""
    docs, errors = load_spec_dir_partial(spec_dir)
    try:
        validate(docs)
    except SpecError as exc:
        errors.extend(exc.diagnostics)
    if errors:
        raise SpecError(errors)
    return build_model(docs)


def render(spec_dir: Path) -> Files:
    """Every output file, the manifest included, as bytes keyed by relative path."""
    files = render_all(load_model(spec_dir))
    files[manifest.NAME] = manifest.build(files, manifest.input_digest(spec_dir))
    return files


def generate(spec_dir: Path, out_dir: Path) -> Files:
    """Render everything in memory first; write (atomically) only if that succeeded."""
    files = render(spec_dir)
    write_tree(out_dir, files)
    return files


def check(spec_dir: Path, out_dir: Path, *, full: bool = False) -> list[tuple[str, str]]:
    """(status, path) of every output file that differs from what generate would write.

    Unless ``full``, the manifest answers without rendering when no input changed
    (see :mod:`ptxgen.manifest`); a manifest that is missing, stale or edited
    falls back to a full render and comparison.
    """
    if not full:
        have = existing_files(out_dir)
        quick = manifest.quick_diff(out_dir, spec_dir, have)
        if quick is not None:
            return quick
    return diff_tree(out_dir, render(spec_dir))
