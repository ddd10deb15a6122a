"""Stage 1 - load: safe YAML with duplicate keys refused and positions kept.

PyYAML's safe loader silently keeps the last of two equal keys and drops all
source positions once it has built Python objects. This loader composes the
node graph itself (still only with the safe constructors), refuses duplicate
keys and merge keys, and records the line and column of every value and key
under its path (a tuple of mapping keys and sequence indices), so that later
stages can report ``file:line:col`` for any element of the data.

Specs may come from anyone (``ptxgen diff`` reads any git revision), so the
loader is hostile-input safe: it composes the document from the parser's events
itself (iteratively; libyaml's own composer recurses and crashes on deep
nesting) and refuses, at the offending position, nesting deeper than
:data:`MAX_DEPTH`, more than :data:`MAX_ALIASES` aliases, recursive aliases and
documents whose aliases expand to more than :data:`MAX_NODES` values (a "billion
laughs" alias bomb is refused in microseconds, before anything is expanded), as
well as files larger than :data:`MAX_FILE_BYTES` and text that is not UTF-8 (at
its real line and column; a UTF-8 byte-order mark is accepted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptxgen.errors import Diagnostic, SpecError

if TYPE_CHECKING:
    import yaml

# PyYAML is imported where a file is parsed: a spec folder that comes from the spec cache
# (ptxgen.cache) is never parsed, and importing PyYAML costs ~10 ms of every command.


def _loader_class() -> type[yaml.SafeLoader]:
    """libyaml's safe loader (much faster), or the pure-Python one."""
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader

Path_ = tuple[str | int, ...]

#: Limits for one spec file (the largest file of spec/ has about 2,700 values, nesting
#: 12 deep and 20 aliases; these leave room to grow without letting a file cost more
#: than a fraction of a second or tens of megabytes).
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIASES = 1000
MAX_NODES = 100_000


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


_MODELINE = re.compile(r"^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$", re.M)


@dataclass
class Document:
    """One loaded spec file."""

    path: Path
    display: str
    rel: str
    data: Any
    source: SourceMap
    text: str

    @property
    def schema_path(self) -> Path | None:
        """The JSON Schema the file's ``yaml-language-server`` modeline names (the file
        says what kind of spec file it is), or None without a modeline."""
        return schema_path_of(self.path, self.text)

    @property
    def schema_name(self) -> str:
        """The file name of :attr:`schema_path` (``descriptor.schema.json``), or ''."""
        path = self.schema_path
        return path.name if path else ""


def schema_path_of(path: Path, text: str) -> Path | None:
    """The JSON Schema that the modeline of the spec file ``path`` with ``text`` names."""
    m = _MODELINE.search(text)
    if not m:
        return None
    return (path.parent / m.group(1)).resolve()


_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, source: SourceMap) -> None:
        self.loader = loader
        self.source = source
        self.errors: list[Diagnostic] = []

    def build(self, node: yaml.Node, path: Path_) -> Any:
        import yaml

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


class _Refused(Exception):
    def __init__(self, mark: Any, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


def _compose(loader: Any) -> Any:
    """The document's node graph, composed from the parser's events without recursion,
    with the limits above enforced as it goes (see the module docstring)."""
    import yaml

    loader.get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        return None
    loader.get_event()  # DocumentStart
    anchors: dict[str, yaml.Node] = {}
    sizes: dict[int, int] = {}  # id(node) -> values it expands to
    open_ids: set[int] = set()
    stack: list[tuple[yaml.Node, list[yaml.Node], list[int]]] = []
    root: yaml.Node | None = None
    aliases = 0

    def add(node: yaml.Node, size: int, mark: Any, why: str) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        parent = stack[-1]
        parent[1].append(node)
        parent[2][0] += size
        if parent[2][0] > MAX_NODES:
            raise _Refused(mark, f"{why} makes the document expand to more than {MAX_NODES} "
                                 f"values (a YAML alias bomb?); spec files are limited to "
                                 f"{MAX_NODES}")

    def anchor(event: Any, node: yaml.Node) -> None:
        if event.anchor is None:
            return
        if event.anchor in anchors:
            first = anchors[event.anchor].start_mark
            raise _Refused(event.start_mark,
                           f"duplicate anchor &{event.anchor} (first defined at line "
                           f"{first.line + 1}, column {first.column + 1})")
        anchors[event.anchor] = node

    get_event, resolve = loader.get_event, loader.resolve
    node: Any
    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    seq_start, map_start = yaml.SequenceStartEvent, yaml.MappingStartEvent
    seq_end, map_end = yaml.SequenceEndEvent, yaml.MappingEndEvent
    while True:
        event = get_event()
        cls = type(event)
        if cls is scalar_event:
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark,
                                   style=event.style)
            if event.anchor is not None:
                anchor(event, node)
                sizes[id(node)] = 1
            if stack:  # the common case, inline
                top = stack[-1]
                top[1].append(node)
                top[2][0] += 1
                if top[2][0] > MAX_NODES:
                    add(node, 0, event.start_mark, "this value")
            else:
                root = node
        elif cls is alias_event:
            node = anchors.get(event.anchor)
            if node is None:
                raise _Refused(event.start_mark, f"alias *{event.anchor} names no anchor "
                                                 f"defined before it")
            if id(node) in open_ids:
                raise _Refused(event.start_mark, f"alias *{event.anchor} refers to a "
                                                 "collection that contains it (a recursive "
                                                 "alias)")
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _Refused(event.start_mark, f"more than {MAX_ALIASES} aliases; spec "
                                                 f"files are limited to {MAX_ALIASES}")
            add(node, sizes[id(node)], event.start_mark, f"alias *{event.anchor}")
        elif cls is seq_start or cls is map_start:
            kind: Any = yaml.SequenceNode if cls is seq_start else yaml.MappingNode
            if len(stack) >= MAX_DEPTH:
                raise _Refused(event.start_mark, f"nesting deeper than {MAX_DEPTH} levels; "
                                                 f"spec files are limited to {MAX_DEPTH}")
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(kind, None, event.implicit)
            node = kind(tag, [], event.start_mark, event.end_mark, flow_style=event.flow_style)
            if event.anchor is not None:
                anchor(event, node)
                open_ids.add(id(node))
            stack.append((node, [], [1]))
        elif cls is seq_end or cls is map_end:
            node, children, size = stack.pop()
            node.end_mark = event.end_mark
            node.value = (list(zip(children[0::2], children[1::2], strict=True))
                          if cls is map_end else children)
            if id(node) in open_ids:
                open_ids.discard(id(node))
                sizes[id(node)] = size[0]
            add(node, size[0], node.start_mark, "this collection")
        elif cls is yaml.DocumentEndEvent:
            break
    if not loader.check_event(yaml.StreamEndEvent):
        raise _Refused(loader.peek_event().start_mark,
                       "a second YAML document ('---'); a spec file holds one document")
    return root


def _refused_before(text: str, mark: Any) -> _Refused | None:
    """A limit of ptxgen's that the text before PyYAML's error at ``mark`` already breaks.

    PyYAML's scanner reads ahead (up to 1,024 characters, to tell a simple key), and
    PyYAML 6.0.4 refuses flow nesting beyond its own maximum while reading ahead, before
    ptxgen has seen the events of the 64th level; composing the text before that position
    again finds ptxgen's own limit, which is then the first problem of the file (the
    same message for every PyYAML)."""
    import yaml

    if mark is None:
        return None
    start = 0
    for _ in range(mark.line):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    loader = _loader_class()(text[:start + mark.column])
    try:
        _compose(loader)
    except _Refused as exc:
        return exc
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return None


# every character outside printable ASCII (the exact test is refused_characters')
_SUSPECT = re.compile(r"[^\x20-\x7e\t\n\r]")


def refused_characters(text: str, display: str) -> list[Diagnostic]:
    """The characters a spec file may not hold, anywhere in it, one diagnostic each (at
    most 20): control characters (other than tab and line ends), bidirectional controls
    (U+202A-U+202E, U+2066-U+2069: "Trojan Source"; ``g++ -Wbidi-chars`` refuses them in
    the generated headers), zero-width and other invisible format characters, and line or
    paragraph separators (YAML reads them as line ends). Spec text reaches the generated
    C++, Python and Markdown, where such a character hides what the code says or breaks
    it; each is refused at its own line and column, before YAML reads the file."""
    import unicodedata

    found = [m.start() for m in _SUSPECT.finditer(text)
             if unicodedata.category(m.group()) in ("Cc", "Cf", "Zl", "Zp")]
    out = []
    for pos in found[:20]:
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        ch = text[pos]
        out.append(Diagnostic(display, line, col,
                              f"U+{ord(ch):04X} ({unicodedata.name(ch, 'a control character')}"
                              ") is not allowed in a spec file: control, bidirectional and "
                              "invisible format characters would reach the generated code"))
    if len(found) > 20:
        out.append(Diagnostic(display, out[-1].line, out[-1].col,
                              f"... and {len(found) - 20} more such characters"))
    return out


def load_text(text: str, display: str, path: Path | None = None,
              rel: str | None = None) -> Document:
    """Parse ``text``; raise :class:`SpecError` with every problem found."""
    import yaml

    source = SourceMap(display)
    if text.startswith("\ufeff"):  # a UTF-8 byte-order mark: not part of the text
        text = text[1:]
    refused = refused_characters(text, display)
    if refused:
        raise SpecError(refused)
    loader = _loader_class()(text)
    try:
        try:
            node = _compose(loader)
            if node is None:
                raise SpecError([Diagnostic(display, 1, 1, "empty document")])
            builder = _Builder(loader, source)
            data = builder.build(node, ())
        except _Refused as exc:
            line, col = exc.mark.line + 1, exc.mark.column + 1
            raise SpecError([Diagnostic(display, line, col, exc.message)]) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            first = _refused_before(text, mark)
            if first is not None:
                line, col = first.mark.line + 1, first.mark.column + 1
                raise SpecError([Diagnostic(display, line, col, first.message)]) from None
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


def decode_text(data: bytes, display: str) -> str:
    """UTF-8 text (a byte-order mark dropped), or SpecError at the first byte that is not
    UTF-8, with its real line and column."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[start:exc.start].decode("utf-8", "replace")) + 1
        hint = (" (a UTF-16 byte-order mark: save the file as UTF-8)"
                if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "")
        raise SpecError([Diagnostic(display, line, col,
                                    f"byte 0x{data[exc.start]:02x} is not UTF-8{hint}; spec "
                                    "files are UTF-8 text")]) from None


def read_file(path: Path, display: str | None = None) -> str:
    """The text of the spec file ``path`` (size limit and UTF-8 checked; SpecError)."""
    shown = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SpecError([Diagnostic(shown, 1, 1, f"{size} bytes; spec files are limited "
                                                     f"to {MAX_FILE_BYTES} bytes")])
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError([Diagnostic(shown, 1, 1,
                                    f"cannot read: {exc.strerror or exc}")]) from None
    return decode_text(data, shown)


def load_file(path: Path, display: str | None = None, rel: str | None = None) -> Document:
    shown = display or str(path)
    return load_text(read_file(path, shown), shown, path, rel)


def load_spec_dir(spec_dir: Path) -> list[Document]:
    """Load every ``*.yaml`` below ``spec_dir`` (schema folder excluded), sorted.

    All files are read; the problems of every file are reported together.
    """
    docs, errors = load_spec_dir_partial(spec_dir)
    if errors:
        raise SpecError(errors)
    return docs


@dataclass(frozen=True)
class SpecText:
    """One spec file as read, before parsing: where it is and its text."""

    path: Path
    display: str
    rel: str
    text: str


def read_spec_dir(spec_dir: Path) -> tuple[list[SpecText], list[Diagnostic]]:
    """The text of every ``*.yaml`` below ``spec_dir`` (schema folder excluded), sorted,
    with the problems of the files that cannot be read."""
    texts: list[SpecText] = []
    errors: list[Diagnostic] = []
    if not spec_dir.is_dir():
        raise SpecError([Diagnostic(str(spec_dir), 1, 1, "spec folder not found")])
    files = sorted(p for p in spec_dir.rglob("*")
                   if p.suffix.lower() in (".yaml", ".yml")
                   and "schema" not in p.relative_to(spec_dir).parts)
    if not files:
        raise SpecError([Diagnostic(str(spec_dir), 1, 1, "no *.yaml spec files found")])
    for p in files:
        if p.suffix != ".yaml":
            errors.append(Diagnostic(_display(p), 1, 1,
                                     f"spec files end in '.yaml'; rename this file to "
                                     f"{p.stem}.yaml (it was not read)"))
            continue
        if not p.is_file():
            errors.append(Diagnostic(_display(p), 1, 1, "not a regular file"))
            continue
        rel = "spec/" + p.relative_to(spec_dir).as_posix()
        shown = _display(p)
        try:
            texts.append(SpecText(p, shown, rel, read_file(p, shown)))
        except SpecError as exc:
            errors.extend(exc.diagnostics)
    return texts, errors


def parse_texts(texts: list[SpecText]) -> tuple[list[Document], list[Diagnostic]]:
    """The documents of the files that parse, with the problems of those that do not."""
    docs: list[Document] = []
    errors: list[Diagnostic] = []
    for t in texts:
        try:
            docs.append(load_text(t.text, t.display, t.path, t.rel))
        except SpecError as exc:
            errors.extend(exc.diagnostics)
    return docs, errors


def load_spec_dir_partial(spec_dir: Path) -> tuple[list[Document], list[Diagnostic]]:
    """Like :func:`load_spec_dir`, but returns the files that did load together
    with the problems of those that did not, so later stages can still check them."""
    texts, errors = read_spec_dir(spec_dir)
    docs, more = parse_texts(texts)
    return docs, errors + more


def _display(p: Path) -> str:
    """A spec file as diagnostics name it: relative to the current folder when inside it."""
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(p)
