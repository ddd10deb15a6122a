"""The document's syntax blocks: opcode templates and the value sets of their slots.

A template such as ``mbarrier.try_wait{.phase_type}{.sem}{.scope}.b64 waitComplete,
[addr], state;`` is a list of parts: literal tokens (``.b64``), slots (``.sem``, named
by a ``.sem = { .acquire, .relaxed };`` line of the same block) and optional groups
(``{...}``). Values may hold optional parts of their own (``.shared{::cta}``) and are
expanded. A template becomes a regular expression over opcodes with one named group
per slot, so that the spec's valid forms can be matched against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ptxgen.doc.markdown import Code, Loc, Section

_SET = re.compile(r"^\s*(\.[\w:]+|::\w+)\s*=\s*\{")
_RULE = re.compile(r"^\s*-{5,}\s*$")
_OPCODE = re.compile(r"^[a-z][\w]*(?:[.{]|\s|$)")


def _expand(value: str) -> list[str]:
    """``.shared{::cta}`` -> ``.shared``, ``.shared::cta`` (an optional part);
    ``.multicast::cluster{::16b, ::32b}`` -> without, or with one of them;
    ``.shared::{cta, cluster}`` -> one of them (braces right after ``::`` choose)."""
    m = re.search(r"\{([^{}]*)\}", value)
    if m is None:
        return [value]
    head, tail = value[:m.start()], value[m.end():]
    options = [o.strip() for o in m.group(1).split(",")]
    if not head.endswith("::"):
        options = ["", *options]
    return [x for opt in options for x in _expand(head + opt + tail)]


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


@dataclass
class ValueSet:
    name: str  # "sem", "level::eviction_priority"
    values: list[str]  # ".acquire", ".shared::cta" (expanded)
    loc: Loc


@dataclass
class Part:
    kind: str  # literal | slot | optional
    text: str = ""  # ".b64" / slot name
    parts: list[Part] = field(default_factory=list)


@dataclass
class Template:
    opcode: str  # as written: "mbarrier.try_wait{.phase_type}{.sem}{.scope}.b64"
    operands: str  # "waitComplete, [addr], state"
    loc: Loc
    parts: list[Part]
    sets: dict[str, ValueSet]

    @property
    def head(self) -> str:
        """The literal opcode up to the first slot or optional part ("ldmatrix.sync.aligned")."""
        out = ""
        for p in self.parts:
            if p.kind != "literal":
                break
            out += p.text
        return out

    def _walk(self, kind: str) -> list[str]:
        out: list[str] = []

        def walk(ps: list[Part]) -> None:
            for p in ps:
                if p.kind == kind:
                    out.append(p.text)
                elif p.kind == "optional":
                    walk(p.parts)
        walk(self.parts)
        return out

    def literals(self) -> list[str]:
        """The literal tokens (``.sync``; also a summary's undefined ``.shape``)."""
        return self._walk("literal")

    def slots(self) -> list[str]:
        """The slot names, in order (optional ones included)."""
        return self._walk("slot")

    def example(self, i: int = 0) -> str:
        """An opcode the template writes: the ``i``-th value of each slot (wrapping
        around), optional parts left out."""
        out = ""
        for p in self.parts:
            if p.kind == "literal":
                out += p.text
            elif p.kind == "slot":
                values = [v for v in self.sets[p.text].values if v]
                out += values[i % len(values)] if values else ""
        return out

    def expansions(self, limit: int = 64) -> list[str] | None:
        """Every opcode the template writes (each optional part with and without), or None
        when there are more than ``limit``."""
        out = [""]

        def walk(ps: list[Part], acc: list[str]) -> list[str] | None:
            for p in ps:
                if p.kind == "literal":
                    acc = [a + p.text for a in acc]
                elif p.kind == "slot":
                    vals = [v for v in self.sets[p.text].values if v]
                    acc = [a + v for a in acc for v in vals]
                else:
                    inner = walk(p.parts, acc)
                    if inner is None:
                        return None
                    acc = acc + inner
                if len(acc) > limit:
                    return None
            return acc
        got = walk(self.parts, out)
        return list(dict.fromkeys(got)) if got is not None else None

    def render(self, choice: dict[str, str]) -> str:
        """The opcode with these slot values; an optional part is written when a slot in
        it has a value in ``choice`` (a slot left out takes its first value)."""
        def inner(ps: list[Part]) -> list[str]:
            return [p.text for p in ps if p.kind == "slot"] + [
                n for p in ps if p.kind == "optional" for n in inner(p.parts)]

        def walk(ps: list[Part]) -> str:
            out = ""
            for p in ps:
                if p.kind == "literal":
                    out += p.text
                elif p.kind == "slot":
                    vals = [v for v in self.sets[p.text].values if v]
                    out += choice.get(p.text, vals[0] if vals else "")
                elif any(n in choice for n in inner(p.parts)):
                    out += walk(p.parts)
            return out
        return walk(self.parts)

    def examples(self, limit: int = 6) -> list[str]:
        """Opcodes that together use every value of every slot (up to ``limit``)."""
        widest = max((len(self.sets[n].values) for n in self.slots()), default=1)
        return list(dict.fromkeys(self.example(i) for i in range(min(widest, limit))))

    def regex(self, wild: frozenset[str] = frozenset()) -> tuple[re.Pattern[str], dict[str, str]]:
        """The opcodes the template writes; group g<i> holds the i-th slot's value. A
        literal token of ``wild`` (a name no value set defines and no opcode has, such as
        a summary's ``.shape``) stands for any one token."""
        names: dict[str, str] = {}

        def build(ps: list[Part]) -> str:
            out = ""
            for p in ps:
                if p.kind == "literal":
                    out += r"\.[\w:]+" if p.text in wild else re.escape(p.text)
                elif p.kind == "slot":
                    g = f"g{len(names)}"
                    names[g] = p.text
                    vals = sorted({v for v in self.sets[p.text].values if v}, key=len,
                                  reverse=True)
                    out += f"(?P<{g}>" + "|".join(re.escape(v) for v in vals) + ")"
                else:
                    # an optional wild token ("{.weak}", no form has it) takes a token
                    # only where nothing else can: lazily, so that "ld.const.u32" gives
                    # ".const" to the .ss slot after it
                    lazy = all(q.kind == "literal" and q.text in wild for q in p.parts)
                    out += "(?:" + build(p.parts) + (")??" if lazy else ")?")
            return out
        return re.compile("^" + build(self.parts) + "$"), names


def _parse_parts(text: str, sets: dict[str, ValueSet]) -> list[Part]:
    parts: list[Part] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth, j = 1, i + 1
            while j < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            parts.append(Part("optional", parts=_parse_parts(text[i + 1:j - 1].strip(), sets)))
            i = j
            continue
        m = re.match(r"\.?[\w:]+", text[i:])
        if m is None:
            i += 1
            continue
        tok = m.group(0)
        # ".shape" names the set "shape"; "{::dimension}" the set "::dimension"
        name = tok[1:] if tok.startswith(".") else tok if tok in sets else None
        if name is not None and name in sets:
            parts.append(Part("slot", name))
        else:
            parts.append(Part("literal", tok))
        i += len(tok)
    return parts


def _statements(code: Code) -> list[list[tuple[int, str]]]:
    """(first line, text) of each ``;``-ended statement or ``.x = {...}`` line, in groups
    (a block's ``-----`` lines separate groups of templates with their own value sets)."""
    groups: list[list[tuple[int, str]]] = [[]]
    cur, start = "", 0
    for line, raw in code.lines:
        t = raw.split("//")[0].strip()
        if _RULE.match(raw):
            if cur:
                groups[-1].append((start, cur))
                cur = ""
            groups.append([])
            continue
        if not t:
            continue
        if cur and _SET.match(t) and not _SET.match(cur) and \
                cur.count("{") <= cur.count("}"):
            # a template written without its ";" ends where its value sets begin
            groups[-1].append((start, cur))
            cur = ""
        if not cur:
            start = line
        cur += (" " if cur else "") + t
        depth = cur.count("{") - cur.count("}")
        ended = cur.endswith(";") or (_SET.match(cur) and cur.rstrip(";").endswith("}"))
        if depth <= 0 and ended:
            groups[-1].append((start, cur))
            cur = ""
    if cur:
        groups[-1].append((start, cur))
    return [g for g in groups if g]


def _set_of(line: int, t: str, file: str) -> ValueSet | None:
    m = _SET.match(t)
    if m is None:
        return None
    body = t[m.end() - 1:].rstrip(";").strip()
    inner = body[1:body.rfind("}")] if "}" in body else body[1:]
    values = [x.rstrip("*") for v in _split_top(inner) if v
              for x in _expand(re.sub(r"\s+", "", v) if "{" in v else v.split()[0])]
    # ".CmpOp = { eq, ne, ... }": a value written without its dot is a qualifier all the
    # same ("none" stands for no qualifier: ".vec = { none, .v2, .v4 }")
    values = ["." + v if re.fullmatch(r"[a-z][\w:]*", v) and v != "none" else v
              for v in values]
    return ValueSet(m.group(1).lstrip("."), values, Loc(file, line))


def _refs(value: str, refs: dict[str, list[str]]) -> list[str]:
    """``value`` with each of its tokens that names a set replaced by each of its values
    (a value that is only a set's name is left alone)."""
    toks = re.findall(r"\.[^.]+", value)
    if len(toks) < 2 or "".join(toks) != value or not any(t in refs for t in toks):
        return [value]
    out = [""]
    for t in toks:
        out = [o + alt for o in out for alt in refs.get(t, [t])]
    return out


def _placeholders(found: list[ValueSet]) -> None:
    """``.collector_usage = { .collector::buffer::op }`` with ``::buffer = { ::a }``:
    every placeholder replaced by each of its values (in every set of the group, also
    where a name is defined again for another template)."""
    sets = {vs.name: vs for vs in found}
    subs = {k: v.values for k, v in sets.items() if k.startswith("::")}
    for vs in found:
        if vs.name.startswith("::"):
            continue
        values = vs.values
        for name, alts in subs.items():
            rx = re.compile(re.escape(name) + r"(?!\w)")
            values = [rx.sub(alt, v) for v in values for alt in alts] if any(
                rx.search(v) for v in values) else values
        # ".mbarrier::complete_tx::bytes{.report_mechanism}" (after _expand),
        # ".to_proxy::from_proxy.release.scope": a token of a value that names another
        # set stands for each of that set's values
        refs = {"." + o.name: o.values for o in sets.values()
                if o is not vs and not o.name.startswith("::")}
        vs.values = list(dict.fromkeys(x for v in values for x in _refs(v, refs)))


def parse_block(code: Code) -> tuple[list[Template], dict[str, ValueSet]]:
    """The block's templates (each with the value sets of its own group, or the nearest
    ones of the block) and every value set of the block."""
    groups = _statements(code)
    file = code.loc.file
    every: list[ValueSet] = []
    group_sets: list[list[ValueSet]] = []
    for g in groups:
        found = [vs for line, t in g for vs in [_set_of(line, t, file)] if vs]
        _placeholders(found)
        group_sets.append(found)
        every += found
    templates: list[Template] = []
    for g, own in zip(groups, group_sets, strict=True):
        for line, t in g:
            if _SET.match(t) or not _OPCODE.match(t) or "=" in t.split()[0]:
                continue
            # a value set binds to the templates above it: in the template's group, then in
            # the block, the first definition after the template, else the last before it
            sets: dict[str, ValueSet] = {}
            for vs in sorted(every, key=lambda v: (v not in own, v.loc.line < line,
                                                   abs(v.loc.line - line))):
                sets.setdefault(vs.name, vs)
            opcode, _, rest = t.rstrip(";").partition(" ")
            # "{.sem}" may be written with spaces inside braces: glue the opcode back
            while rest and rest.lstrip().startswith("{.") and "}" in rest:
                close = rest.index("}")
                opcode += rest[:close + 1].replace(" ", "")
                rest = rest[close + 1:]
            templates.append(Template(opcode, rest.strip().rstrip(";").strip(),
                                      Loc(file, line), _parse_parts(opcode, sets), sets))
    return templates, {vs.name: vs for vs in every}  # (the last of a name)


def syntax_blocks(section: Section) -> list[Code]:
    """The code blocks of the section's "Syntax" part (before "Description")."""
    syntax_line = next((ln for ln, t in section.text if t.strip() == "Syntax"), None)
    if syntax_line is None:
        return []
    desc_line = next((ln for ln, t in section.text
                      if ln > syntax_line and t.strip() in ("Description", "Semantics")),
                     10 ** 9)
    return [c for c in section.codes if syntax_line < c.loc.line < desc_line]


def templates_of(section: Section) -> list[Template]:
    out: list[Template] = []
    for code in syntax_blocks(section):
        out += parse_block(code)[0]
    return out
