"""The migration report of ``ptxgen scan``: each statement's form, and the asm blocks the
wrappers can replace whole.

A statement is *known* when the spec reads its opcode as a form (any spelling ptxas reads,
:func:`ptxgen.model.instructions.lookup`); a block is *replaceable* when every statement
in it is known or glue (``.reg`` declarations, ``{ }`` scopes, labels): its replacement is
the wrapper calls of its statements, in order (:func:`ptxgen.model.calls.calls_for`).
Opcodes are looked up once each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ptxgen.model.calls import calls_for, form_written, operand_texts
from ptxgen.model.instructions import Form, InstructionSet, lookup
from ptxgen.source import Statement, split_operands


@dataclass(frozen=True)
class Known:
    """What the spec says of one opcode."""

    instruction: str | None  # None: not a form the spec knows
    isa_opcode: str | None
    targets: tuple[str, ...]
    cpp: str | None
    python: str | None
    problem: str
    many: bool = False  # several forms differ by an operand the call names

class Reporter:
    """Looks statements up against one instruction set (each opcode once)."""

    def __init__(self, iset: InstructionSet) -> None:
        self.iset = iset
        self._known: dict[str, Known] = {}
        # the special registers the spec reads (%clock64): never a register operand's text
        self._specials = {t for ins in iset.instructions for o in ins.operands
                          for t in (o.text, *(a.text for a in o.choice)) if t}

    def known(self, opcode: str) -> Known:
        hit = self._known.get(opcode)
        if hit is None:
            hit = self._known[opcode] = self._look(opcode)
        return hit

    def _look(self, opcode: str) -> Known:
        if "%" in opcode:  # an opcode built from asm operands
            return Known(None, None, (), None, None, "the opcode has asm operands in it")
        found = lookup(self.iset, opcode)
        if not found.valid or found.instruction is None:
            return Known(None, None, (), None, None, "; ".join(found.problems)[:300])
        targets: dict[str, None] = {}
        for f in found.forms:
            targets.update(dict.fromkeys(f.support.matrix(self.iset.targets)))
        calls = calls_for(found.forms[0])
        many = len({calls_for(f) for f in found.forms}) > 1
        return Known(found.instruction.name, found.isa_opcode or found.forms[0].opcode,
                     tuple(t.name for t in self.iset.targets.targets if t.name in targets),
                     calls.cpp if calls else None, calls.python if calls else None, "", many)

    def statement(self, s: Statement) -> dict[str, Any]:
        row: dict[str, Any] = {"file": s.file, "line": s.line, "col": s.col, "block": s.block,
                               "conditions": list(s.conditions), "ptx": s.text,
                               "predicate": s.predicate, "label": s.label}
        if s.is_glue:
            row["kind"] = "glue"
            return row
        k = self.known(s.opcode)
        row.update({"kind": "instruction", "opcode": s.opcode, "family": family(s.opcode),
                    "known": k.instruction is not None})
        if k.instruction is not None:
            cpp, python = k.cpp, k.python
            written = split_operands(s.operands)
            if self._specials.intersection(written):  # is it read as a special register?
                form = form_written(lookup(self.iset, s.opcode).forms, written)
                if form is not None and self._misread(form, written):
                    row.update({"known": False, "problem": (
                        f"{s.opcode} reads a special register with a type other than its "
                        "own (ptxgen support mov.u32, mov.u64)")})
                    return row
            if k.many:  # the operands choose among the forms (a special register's name)
                form = form_written(lookup(self.iset, s.opcode).forms, written)
                calls = calls_for(form) if form is not None else None
                cpp, python = (calls.cpp, calls.python) if calls else (None, None)
            row.update({"instruction": k.instruction, "isa_opcode": k.isa_opcode,
                        "targets": list(k.targets), "cpp": cpp, "python": python})
        else:
            row["problem"] = k.problem
        return row


    def _misread(self, form: Form, written: Sequence[str]) -> bool:
        """Whether ``form`` takes a special register (``mov.b64 d, %clock64``) for a
        register: a type the register's own form does not have."""
        texts = operand_texts(form, tuple(written)) or {}
        return any(u.kind == "register" and texts.get(u.name) in self._specials
                   for u in form.operands)


def family(opcode: str) -> str:
    """The opcode family a summary counts by: its first word (``mma``, ``ld``, ``bar``)."""
    return opcode.split(".", 1)[0].split("::", 1)[0]


def report(iset: InstructionSet, statements: Sequence[Statement]) -> dict[str, Any]:
    """Rows per statement, blocks with their replacement, and the summary."""
    rep = Reporter(iset)
    rows = [rep.statement(s) for s in statements]
    blocks: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        blocks.setdefault((r["file"], r["block"]), []).append(r)
    block_rows = []
    for (file, number), members in blocks.items():
        ins = [m for m in members if m["kind"] == "instruction"]
        if not ins:
            continue
        ok = all(m["known"] for m in ins)
        block_rows.append({"file": file, "block": number, "line": members[0]["line"],
                           "statements": len(ins), "replaceable": ok,
                           "replacement": [m["cpp"] for m in ins] if ok else None})
    instr = [r for r in rows if r["kind"] == "instruction"]
    fam_total: Counter[str] = Counter(r["family"] for r in instr)
    fam_known: Counter[str] = Counter(r["family"] for r in instr if r["known"])
    uncovered: Counter[str] = Counter(r["opcode"] for r in instr if not r["known"])
    summary = {
        "statements": len(instr), "statements_known": sum(r["known"] for r in instr),
        "blocks": len(block_rows),
        "blocks_replaceable": sum(b["replaceable"] for b in block_rows),
        "families": {f: {"statements": n, "known": fam_known[f]}
                     for f, n in fam_total.most_common()},
        "uncovered_opcodes": dict(uncovered.most_common()),
    }
    return {"statements": rows, "blocks": block_rows, "summary": summary}


def summary_text(result: dict[str, Any], top: int = 20) -> str:
    """The summary as lines of text."""
    s = result["summary"]

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f}%" if b else "-"

    lines = [f"statements: {s['statements_known']} of {s['statements']} known "
             f"({pct(s['statements_known'], s['statements'])})",
             f"asm blocks: {s['blocks_replaceable']} of {s['blocks']} replaceable "
             f"({pct(s['blocks_replaceable'], s['blocks'])})", "by family:"]
    for f, c in list(s["families"].items())[:top]:
        lines.append(f"  {f:<16} {c['known']:>6} of {c['statements']:<6} known")
    if s["uncovered_opcodes"]:
        lines.append("uncovered opcodes (most written first):")
        for op, n in list(s["uncovered_opcodes"].items())[:top]:
            lines.append(f"  {n:>6}  {op}")
    return "\n".join(lines)
