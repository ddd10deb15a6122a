"""The per-user cache of validated spec folders (like mypy's cache): a spec folder that
validated once is not parsed and checked again while nothing it depends on changed.

An entry is the loaded documents (data, source positions, text) of a spec folder that
passed every check of validation and of the model (:func:`ptxgen.pipeline.load_documents`),
stored with :mod:`marshal` (plain data only: loading an entry runs no code) under a key
that is the SHA-256 of everything the verdict and the documents are a function of:

* the path, display name, ``spec/`` name and text of every spec file, in order;
* the bytes of every JSON Schema a spec file's modeline names (inside the folder or not);
* the sources of the ``ptxgen`` package itself (every ``*.py`` file of it: loader, checks,
  model), the Python version and the PyYAML version and build.

Any change to any of them is another key, so an entry is never stale: it is either
exactly what loading and validating would produce, or it is not found. A spec that does
not validate is never stored (its diagnostics are computed every time), nor is a
verdict that JSON Schema's library took part in (its version is not in the key: the
fast schema check alone passes a valid spec). The output of ``generate`` does not
depend on the cache; ``PTXGEN_NO_CACHE=1`` turns it off. Entries live in
``$XDG_CACHE_HOME/ptxgen/specs`` (default ``~/.cache``); the :data:`KEEP` newest are
kept. This module imports nothing of the pipeline: the pipeline calls it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

GENERATOR_DIR = Path(__file__).resolve().parent

#: Entries kept per user (the newest by modification time); each is about 2 MB for
#: today's spec.
KEEP = 8

#: The version of the entries' layout (part of every key).
FORMAT = b"ptxgen-spec-cache/2"


def folder(kind: str) -> Path | None:
    """``$XDG_CACHE_HOME/ptxgen/<kind>`` (created), or None when caching is off
    (``PTXGEN_NO_CACHE``) or no folder can be made."""
    if os.environ.get("PTXGEN_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "ptxgen" / kind
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return path


@cache
def source_digest() -> bytes:
    """SHA-256 of the ``ptxgen`` package's own sources, the Python version and the
    PyYAML version and build (once per process)."""
    h = hashlib.sha256(FORMAT)
    h.update(f"\0{sys.version}\0{sys.implementation.cache_tag}\0marshal {marshal.version}"
             f"\0{_pyyaml_build()}\0".encode())
    for p in sorted(GENERATOR_DIR.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        h.update(p.relative_to(GENERATOR_DIR).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.digest()


def _pyyaml_build() -> str:
    """PyYAML's version and build, without importing it (~10 ms that a spec folder from
    the cache does not need): the SHA-256 of its ``__init__.py`` (which holds its
    version) and the names of the files of its package (its libyaml extension
    ``_yaml*`` among them)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("yaml")
        if spec is None or spec.origin is None:
            return "pyyaml missing"
        origin = Path(spec.origin)
        names = sorted(p.name for p in origin.parent.iterdir() if p.name != "__pycache__")
        return (f"pyyaml {hashlib.sha256(origin.read_bytes()).hexdigest()} "
                f"{' '.join(names)}")
    except (OSError, ImportError, ValueError):
        return "pyyaml unknown"


def key(files: Iterable[tuple[str, ...]], schemas: Iterable[tuple[str, bytes]]) -> str:
    """The key of an entry: ``files`` are (path, display, rel, text) of every spec file in
    order, ``schemas`` (path, bytes) of every schema they name."""
    h = hashlib.sha256(source_digest())
    for fields in files:
        h.update(b"\1file")
        for f in fields:
            data = f.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "little") + data)
    for path, data in schemas:
        name = path.encode("utf-8", "surrogatepass")
        h.update(b"\1schema" + len(name).to_bytes(8, "little") + name)
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def get(kind: str, name: str) -> object | None:
    """The entry ``name`` of ``kind``, or None (missing, unreadable, or not what
    :func:`put` writes)."""
    base = folder(kind)
    if base is None:
        return None
    try:
        with open(base / name, "rb") as f:
            data = f.read()  # marshal.load(f) reads a file object piecewise: 10x slower
    except OSError:
        return None
    try:
        value: object = marshal.loads(data)  # plain data only (no code objects)
    except (EOFError, ValueError, TypeError):
        return None
    return value


def put(kind: str, name: str, value: Any) -> None:
    """Store ``value`` (plain data: what :mod:`marshal` writes) as entry ``name`` of
    ``kind``, atomically; keep the :data:`KEEP` newest entries. Never raises for a
    value it cannot store or a folder it cannot write: the cache is an optimisation."""
    base = folder(kind)
    if base is None:
        return
    try:
        data = marshal.dumps(value)
    except ValueError:  # a value marshal cannot write (e.g. a YAML timestamp)
        return
    tmp = base / f".{name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, base / name)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    _prune(base)


def _prune(base: Path) -> None:
    try:
        entries = [(e.stat().st_mtime, e.path) for e in os.scandir(base)
                   if e.is_file() and not e.name.startswith(".")]
    except OSError:
        return
    for _, path in sorted(entries, reverse=True)[KEEP:]:
        try:
            os.unlink(path)
        except OSError:
            pass
