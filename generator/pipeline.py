"""The whole pipeline as functions the CLI (and tests) call:
load -> validate -> model (checked; with ``ptx_isa``, as of that version) -> emit -> write.

With ``ptx_isa``, the model is the spec as of that PTX ISA version
(:func:`ptxgen.model.versions.at`); the emitters get that model and do not know.
"""

from __future__ import annotations

from pathlib import Path

from ptxgen import cache, manifest
from ptxgen.emit import Files, render_all
from ptxgen.errors import SpecError
from ptxgen.load import Document, SourceMap, parse_texts, read_spec_dir, schema_path_of
from ptxgen.model import Spec, build_model, versions
from ptxgen.model.selection import with_selection
from ptxgen.write import check_output, diff_tree, existing_files, write_tree


def load_documents(spec_dir: Path, *, use_cache: bool = True) -> list[Document]:
    """Load and validate ``spec_dir``; raise SpecError with every problem found.

    A folder that validated before with the same files, schemas and generator comes
    from the per-user cache (:mod:`ptxgen.cache`, keyed by all of them) without being
    parsed or checked again; ``use_cache=False`` (and ``PTXGEN_NO_CACHE=1``) always
    parses and checks, and stores nothing.
    """
    texts, errors = read_spec_dir(spec_dir)
    key = _cache_key([(str(t.path), t.display, t.rel, t.text) for t in texts],
                     [t.path for t in texts], [t.text for t in texts]
                     ) if use_cache and not errors else None
    if key is not None:
        docs = _from_cache(cache.get(SPEC_CACHE, key))
        if docs is not None:
            return docs
    # validation only where the cache has no verdict (its modules cost ~10 ms to import)
    from ptxgen import validate
    from ptxgen.model.checks import check_model
    from ptxgen.validate import schema

    docs, more = parse_texts(texts)
    errors.extend(more)
    checks_before = schema.jsonschema_checks
    validated = validate.check(docs)
    errors.extend(validated.errors)
    errors.extend(check_model(validated))
    if errors:
        raise SpecError(errors)
    if key is not None and schema.jsonschema_checks == checks_before:
        # the key of what was loaded (the files may have changed since they were read)
        stored = _cache_key([(str(d.path), d.display, d.rel, d.text) for d in docs],
                            [d.path for d in docs], [d.text for d in docs])
        if stored == key:
            cache.put(SPEC_CACHE, key, [(str(d.path), d.display, d.rel, d.data, d.source.file,
                                         d.source.values, d.source.keys, d.text)
                                        for d in docs])
    return docs


SPEC_CACHE = "specs"


def _cache_key(files: list[tuple[str, ...]], paths: list[Path], texts: list[str]
               ) -> str | None:
    """The cache key of spec files, with the bytes of the schemas their modelines name;
    None when a modeline names no schema file that validation would read (it says why: a
    device such as /dev/zero is never read here) or a schema cannot be read."""
    schemas: dict[str, bytes] = {}
    for path, text in zip(paths, texts, strict=True):
        found = schema_path_of(path, text)
        if found is None or not found.name.endswith(".schema.json") or not found.is_file():
            return None
        name = str(found)
        if name not in schemas:
            try:
                schemas[name] = found.read_bytes()
            except OSError:
                return None
    return cache.key(files, sorted(schemas.items()))


def _from_cache(entry: object) -> list[Document] | None:
    """The documents of a cache entry, or None when it is not one."""
    if not isinstance(entry, list):
        return None
    try:
        return [Document(Path(path), display, rel, data, SourceMap(file, values, keys), text)
                for path, display, rel, data, file, values, keys, text in entry]
    except (TypeError, ValueError):
        return None


def load_model(spec_dir: Path, ptx_isa: str | None = None, *, use_cache: bool = True) -> Spec:
    """Load and validate ``spec_dir``; raise SpecError with every problem found.

    With ``ptx_isa``, the model of the spec as of that PTX ISA version (see
    :mod:`ptxgen.model.versions`; :class:`ptxgen.model.versions.ViewError` for a
    version the spec does not list). ``use_cache``: see :func:`load_documents`.
    """
    return model_of(load_documents(spec_dir, use_cache=use_cache), ptx_isa)


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


def descriptor_package(spec_dir: Path) -> Files:
    """The generated Python descriptor classes of a spec folder (``python/...``: what
    ``encode`` / ``decode --spec DIR`` load as ``ptxgen.isa``)."""
    from ptxgen.emit.python import descriptors as python_descriptors

    files: Files = python_descriptors.emit(load_model(spec_dir))
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
    files = render(spec_dir, ptx_isa, select)
    out = diff_tree(out_dir, files)
    if out == [("changed", manifest.NAME)] and manifest.same_but_inputs(
            existing_files(out_dir).get(manifest.NAME), files[manifest.NAME]):
        # Every generated file is what generate would write; only the fingerprint of the
        # inputs differs (another Jinja2 release renders the same bytes): up to date.
        return []
    return out
