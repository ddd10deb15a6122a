"""Stage 1 - load: safe YAML with duplicate keys refused and positions kept.

PyYAML's safe loader silently keeps the last of two equal keys and drops all
source positions once it has built Python objects. This loader composes the
node graph itself (still only with the safe constructors), refuses duplicate
keys and merge keys, and records the line and column of every value and key
under its path (a tuple of mapping keys and sequence indices), so that later
stages can report ``file:line:col`` for any element of the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ptxgen.errors import Diagnostic, SpecError

try:  # libyaml is much faster; fall back to the pure-Python loader.
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

Path_ = tuple[str | int, ...]


@dataclass
class SourceMap:
    """Positions (1-based line, column) of every value and mapping key."""

    file: str
    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Path_, *, key: bool = False) -> tuple[int, int]:
        """The position of ``path``, or of its nearest recorded ancestor."""
        table = self.keys if key else self.values
        p = tuple(path)
        while p:
            if p in table:
                return table[p]
            if p in self.values:
                return self.values[p]
            p = p[:-1]
        return self.values.get((), (1, 1))

    def diag(self, path: Path_, message: str, *, key: bool = False) -> Diagnostic:
        line, col = self.locate(path, key=key)
        return Diagnostic(self.file, line, col, message)


@dataclass
class Document:
    """One loaded spec file."""

    path: Path
    display: str
    rel: str
    data: Any
    source: SourceMap
    text: str


_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, source: SourceMap) -> None:
        self.loader = loader
        self.source = source
        self.errors: list[Diagnostic] = []

    def build(self, node: yaml.Node, path: Path_) -> Any:
        self.source.values.setdefault(path, _pos(node))
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _PLAIN_TAGS:
            line, col = _pos(node)
            self.errors.append(Diagnostic(self.source.file, line, col,
                                          f"unsupported YAML tag {node.tag!r}: specs use plain "
                                          "mappings, sequences and scalars only"))
            return None
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            seen: dict[Any, yaml.Node] = {}
            for knode, vnode in node.value:
                if knode.tag == "tag:yaml.org,2002:merge":
                    line, col = _pos(knode)
                    self.errors.append(Diagnostic(self.source.file, line, col,
                                                  "merge keys ('<<') are not supported in specs"))
                    continue
                key = self.loader.construct_object(knode, deep=True)
                if not isinstance(key, (str, int)):
                    line, col = _pos(knode)
                    self.errors.append(Diagnostic(self.source.file, line, col,
                                                  f"mapping key {key!r} must be a string"))
                    continue
                if key in seen:
                    line, col = _pos(knode)
                    first = _pos(seen[key])
                    self.errors.append(Diagnostic(
                        self.source.file, line, col,
                        f"duplicate key {key!r} (first defined at line {first[0]}, "
                        f"column {first[1]})"))
                    continue
                seen[key] = knode
                self.source.keys[path + (key,)] = _pos(knode)
                out[key] = self.build(vnode, path + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        return self.loader.construct_object(node, deep=True)


def load_text(text: str, display: str, path: Path | None = None,
              rel: str | None = None) -> Document:
    """Parse ``text``; raise :class:`SpecError` with every problem found."""
    source = SourceMap(display)
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                raise SpecError([Diagnostic(display, 1, 1, "empty document")])
            builder = _Builder(loader, source)
            data = builder.build(node, ())
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            msg = " ".join(str(s) for s in (exc.context, exc.problem) if s)
            raise SpecError([Diagnostic(display, line, col, f"YAML syntax error: {msg}")]) from None
        except yaml.YAMLError as exc:
            raise SpecError([Diagnostic(display, 1, 1, f"YAML error: {exc}")]) from None
    finally:
        loader.dispose()
    if builder.errors:
        raise SpecError(builder.errors)
    return Document(path or Path(display), display, rel or display, data, source, text)


def load_file(path: Path, display: str | None = None, rel: str | None = None) -> Document:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([Diagnostic(display or str(path), 1, 1, f"cannot read: {exc}")]) from None
    return load_text(text, display or str(path), path, rel)


def load_spec_dir(spec_dir: Path) -> list[Document]:
    """Load every ``*.yaml`` below ``spec_dir`` (schema folder excluded), sorted.

    All files are read; the problems of every file are reported together.
    """
    docs, errors = load_spec_dir_partial(spec_dir)
    if errors:
        raise SpecError(errors)
    return docs


def load_spec_dir_partial(spec_dir: Path) -> tuple[list[Document], list[Diagnostic]]:
    """Like :func:`load_spec_dir`, but returns the files that did load together
    with the problems of those that did not, so later stages can still check them."""
    docs: list[Document] = []
    errors: list[Diagnostic] = []
    if not spec_dir.is_dir():
        raise SpecError([Diagnostic(str(spec_dir), 1, 1, "spec folder not found")])
    files = sorted(p for p in spec_dir.rglob("*.yaml")
                   if "schema" not in p.relative_to(spec_dir).parts)
    if not files:
        raise SpecError([Diagnostic(str(spec_dir), 1, 1, "no *.yaml spec files found")])
    for p in files:
        rel = "spec/" + p.relative_to(spec_dir).as_posix()
        try:
            display = p.resolve().relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            display = str(p)
        try:
            docs.append(load_file(p, display, rel))
        except SpecError as exc:
            errors.extend(exc.diagnostics)
    return docs, errors
