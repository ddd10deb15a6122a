"""The opcodes a PTX ISA document writes, for ``ptxgen probe --doc``.

The document is Markdown (one file per section, or any folder of ``.md`` files). Its
code blocks hold syntax templates (``mma.sync.aligned.shape.row.col{.rnd}.dtype...``)
with the value sets they use (``.shape = {.m8n8k4, .m16n8k4};``, ``.ss =
{.shared{::cta}}``), and examples (``mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn
{...}``). :func:`opcodes` expands every template line of a code block with the sets of
that block (or, for a name the block does not define, the section's) into the concrete
opcodes it writes (at most :data:`CAP` per line, spread over the product), and keeps
the examples' opcodes as they are, by the instruction of the spec they start with.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ptxgen.source import split_operands

#: The most opcodes one template line expands to (a sample spread over the product).
CAP = 384

_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)
_SET = re.compile(r"^\s*\.(\w+)\s*=\s*\{(.*)\}\s*;?\s*(?://.*)?$")
_SEGMENT = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|\.[A-Za-z0-9_:]+(?:\{::[^{}]*\})?")


def _split_top(text: str) -> list[str]:
    """``a, b{x, y}, c`` -> [a, b{x, y}, c]: commas outside braces (ptxgen.source's split)."""
    return [x for x in split_operands(text) if x]


def _expand_braces(item: str) -> list[str]:
    """``.shared{::cta}`` -> .shared, .shared::cta; ``.async.shared::{cta, cluster}`` ->
    .async.shared::cta, .async.shared::cluster."""
    m = re.search(r"\{([^{}]*)\}", item)
    if not m:
        return [item]
    head, tail = item[:m.start()], item[m.end():]
    alts = [a.strip() for a in m.group(1).split(",")]
    if head.endswith("::") or not alts[0].startswith((".", "::")):
        options = alts
    else:
        options = ["", *alts]
    return [x for a in options for x in _expand_braces(head + a + tail)]


def value_sets(block: str) -> dict[str, list[str]]:
    """``{name: ['.a', '.b']}`` of a code block's ``.name = { .a, .b };`` lines."""
    out: dict[str, list[str]] = {}
    for line in block.splitlines():
        m = _SET.match(line)
        if m:
            vals = [v for item in _split_top(m.group(2)) for v in _expand_braces(item)]
            out.setdefault(m.group(1), [v for v in vals if v.startswith(".")])
    return out


def _alternatives(segment: str, sets: dict[str, list[str]]) -> list[str]:
    if segment.startswith("{"):  # an optional part: left out, or any of its readings
        inner = segment[1:-1]
        return ["", *[x for part in inner.split("|") for x in _alternatives_seq(part, sets)]]
    m = re.fullmatch(r"\.([A-Za-z0-9_:]+)(\{.*\})?", segment)
    if m and m.group(2):  # .shared{::cta}
        return _expand_braces(segment)
    name = m.group(1) if m else segment
    return sets.get(name, [segment])


def _alternatives_seq(text: str, sets: dict[str, list[str]]) -> list[str]:
    segs = _SEGMENT.findall(text)
    return ["".join(p) for p in itertools.product(*(_alternatives(s, sets) for s in segs))]


def expand(template: str, sets: dict[str, list[str]], cap: int = CAP) -> list[str]:
    """The opcodes a template writes (``name.a{.b}.c`` with the value sets), at most
    ``cap``, spread evenly over the product when it is larger."""
    head = re.match(r"[A-Za-z_][A-Za-z0-9_]*", template)
    if not head:
        return []
    segs = _SEGMENT.findall(template[head.end():])
    if "".join(segs) != template[head.end():]:
        return []  # not a dotted template (prose, an operand list)
    choices = [_alternatives(s, sets) for s in segs]
    total = 1
    for c in choices:
        total *= len(c)
    if total <= cap:
        return [head.group() + "".join(p) for p in itertools.product(*choices)]
    out = []
    for n in range(cap):  # mixed-radix digits of evenly spread indexes
        idx, parts = n * total // cap, []
        for c in reversed(choices):
            idx, r = divmod(idx, len(c))
            parts.append(c[r])
        out.append(head.group() + "".join(reversed(parts)))
    return out


def read_folder(paths: Sequence[Path]) -> list[tuple[str, str]]:
    """(file, text) of every Markdown file under ``paths``, in name order."""
    files: list[Path] = []
    for p in paths:
        files += sorted(p.rglob("*.md")) if p.is_dir() else [p]
    return [(str(f), f.read_text(encoding="utf-8", errors="replace")) for f in files]


def opcodes(docs: Iterable[tuple[str, str]], names: Sequence[str]) -> dict[str, list[str]]:
    """{instruction name: the opcodes the document writes for it} for the spec's
    instruction ``names`` (an opcode goes to the longest name it starts with)."""
    by_len = sorted(names, key=len, reverse=True)
    firsts = {n.split(".")[0] for n in names}
    out: dict[str, list[str]] = {n: [] for n in names}
    for _file, text in docs:
        if not any(f in text for f in firsts):
            continue
        blocks = _BLOCK.findall(text)
        section: dict[str, list[str]] = {}
        for b in blocks:
            for k, v in value_sets(b).items():
                section.setdefault(k, v)
        for b in blocks:
            block_sets = {**section, **value_sets(b)}
            # a template's own sets are the set lines after it (before the next template)
            groups: list[tuple[list[tuple[str, str]], list[str]]] = []
            for line in b.splitlines():
                token = _opcode_token(line)
                name = _instruction_of(token, by_len, firsts)
                if name is not None:
                    if not groups or groups[-1][1]:
                        groups.append(([], []))
                    groups[-1][0].append((name, token))
                elif _SET.match(line) and groups:
                    groups[-1][1].append(line)
            for templates, set_lines in groups:
                sets = {**block_sets, **value_sets("\n".join(set_lines))}
                for name, token in templates:
                    for op in expand(token, sets):
                        if op not in out[name]:
                            out[name].append(op)
    return out


def _opcode_token(line: str) -> str:
    """The first word of a code line (after a ``@p`` guard), without its ``;``."""
    words = line.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].rstrip(";") if words else ""


def _instruction_of(token: str, by_len: Sequence[str], firsts: set[str]) -> str | None:
    if not token or token.split(".")[0] not in firsts:
        return None
    return next((n for n in by_len if token == n or token.startswith((n + ".", n + "{"))),
                None)


__all__ = ["CAP", "expand", "opcodes", "read_folder", "value_sets"]
