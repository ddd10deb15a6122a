"""Which bits of a register are known, from the constants a function builds it from.

nvcc builds a descriptor word from constants (``mov.b32 %r253, 136316048;``) or ORs its
constant fields onto an address (``or.b64 %rd24, %rd28, 4611756662049538048;``, the
address part shifted and masked). ``values(function)`` follows ``mov``, ``cvt`` between
integer widths, ``and``/``or``/``xor``/``not``, ``shl``/``shr`` by a constant and
``add``/``sub`` through every register of the function and returns, per register, the bits
that are the same on every path: :class:`Known` (a mask of known bits and their values).
The analysis is flow-insensitive: a register written in several places keeps only the
bits that all its writes agree on, so a loop-carried register is never taken as constant.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ptxgen.lint.ptxtext import Statement
from ptxgen.source import split_operands

_INT = re.compile(r"(-)?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uU]?")
_REG = re.compile(r"%?[A-Za-z_$][\w$]*")
_WIDTH = re.compile(r"\.[bsu](8|16|32|64)\b")


@dataclass(frozen=True)
class Known:
    """``mask``: the bits known; ``value``: their values (0 outside ``mask``)."""

    width: int
    mask: int
    value: int

    @property
    def full(self) -> bool:
        return self.mask == (1 << self.width) - 1

    def bits(self, lsb: int, width: int) -> int | None:
        """The field ``lsb .. lsb+width-1`` if all its bits are known, else None."""
        m = ((1 << width) - 1) << lsb
        return (self.value & m) >> lsb if self.mask & m == m else None

    def ones(self) -> int:
        return self.value & self.mask


def constant(width: int, v: int) -> Known:
    all_ = (1 << width) - 1
    return Known(width, all_, v & all_)


def unknown(width: int) -> Known:
    return Known(width, 0, 0)


def parse_int(text: str) -> int | None:
    """A PTX integer constant (hex, binary, octal, decimal, optional U suffix and minus)."""
    m = _INT.fullmatch(text.strip())
    if m is None:
        return None
    sign, digits = m.group(1), m.group(2).lower()
    base = 16 if digits.startswith("0x") else 2 if digits.startswith("0b") else (
        8 if len(digits) > 1 and digits.startswith("0") else 10)
    body = digits[2:] if base in (16, 2) else digits
    if len(body) > 40:  # longer than any 64-bit constant: not one the lint follows
        return None
    v = int(body, base)
    return -v if sign else v


def _meet(a: Known, b: Known) -> Known:
    agree = a.mask & b.mask & ~(a.value ^ b.value)
    return Known(a.width, agree, a.value & agree)


def _resize(k: Known, width: int, signed: bool = False) -> Known:
    if width <= k.width:
        m = (1 << width) - 1
        return Known(width, k.mask & m, k.value & m)
    high = ((1 << width) - 1) ^ ((1 << k.width) - 1)
    top = 1 << (k.width - 1)
    if not signed:
        return Known(width, k.mask | high, k.value)
    if k.mask & top:
        return Known(width, k.mask | high, k.value | (high if k.value & top else 0))
    return Known(width, k.mask, k.value)


def _add(a: Known, b: Known, carry: int = 0) -> Known:
    """Known bits of a + b (+ carry), as LLVM's KnownBits::computeForAddSub does."""
    w, m = a.width, (1 << a.width) - 1
    a_zero, b_zero = ~a.value & a.mask & m, ~b.value & b.mask & m
    a_one, b_one = a.value & a.mask, b.value & b.mask
    sum_max = ((~a_zero & m) + (~b_zero & m) + carry) & m
    sum_min = (a_one + b_one + carry) & m
    carry_zero = ~(sum_max ^ a_zero ^ b_zero) & m
    carry_one = (sum_min ^ a_one ^ b_one) & m
    known = a.mask & b.mask & (carry_zero | carry_one)
    return Known(w, known, sum_min & known)


def _not(a: Known) -> Known:
    return Known(a.width, a.mask, ~a.value & a.mask)


def _and(a: Known, b: Known) -> Known:
    zero = (a.mask & ~a.value) | (b.mask & ~b.value)
    one = a.mask & a.value & b.mask & b.value
    mask = (zero | one) & ((1 << a.width) - 1)
    return Known(a.width, mask, one)


def _or(a: Known, b: Known) -> Known:
    one = (a.mask & a.value) | (b.mask & b.value)
    zero = a.mask & ~a.value & b.mask & ~b.value
    mask = (zero | one) & ((1 << a.width) - 1)
    return Known(a.width, mask, one & mask)


def _xor(a: Known, b: Known) -> Known:
    mask = a.mask & b.mask
    return Known(a.width, mask, (a.value ^ b.value) & mask)


def _shl(a: Known, n: int) -> Known:
    m = (1 << a.width) - 1
    if n >= a.width:
        return constant(a.width, 0)
    return Known(a.width, ((a.mask << n) | ((1 << n) - 1)) & m, (a.value << n) & m)


def _shr(a: Known, n: int, signed: bool) -> Known:
    if n >= a.width:
        n = a.width - 1 if signed else a.width
        if not signed:
            return constant(a.width, 0)
    high = ((1 << a.width) - 1) ^ ((1 << (a.width - n)) - 1)
    top = 1 << (a.width - 1)
    mask, value = a.mask >> n, a.value >> n
    if not signed:
        return Known(a.width, mask | high, value)
    if a.mask & top:
        return Known(a.width, mask | high, value | (high if a.value & top else 0))
    return Known(a.width, mask & ~high, value & ~high)


_BINARY: dict[str, Callable[[Known, Known], Known]] = {
    "and": _and, "or": _or, "xor": _xor, "add": _add,
    "sub": lambda a, b: _add(a, _not(b), 1),
}


class Values:
    """The known bits of every register of one function (computed on first use)."""

    def __init__(self, statements: Iterable[Statement]) -> None:
        self._defs: dict[str, list[Statement]] = {}
        for st in statements:
            dest = st.dest
            if not dest or dest.startswith("{"):
                continue  # an unpacking mov or a vector load: its registers left unknown
            self._defs.setdefault(dest, []).append(st)
        self._memo: dict[tuple[str, int], Known] = {}
        self._busy: set[str] = set()

    def of(self, operand: str, width: int) -> Known:
        """The known bits of an operand (an immediate or a register) as ``width`` bits."""
        text = operand.strip()
        v = parse_int(text)
        if v is not None:
            return constant(width, v)
        if text.startswith("{") and text.endswith("}"):  # a packed vector {lo, hi}
            parts = split_operands(text[1:-1])
            if len(parts) in (2, 4) and width % len(parts) == 0:
                each = width // len(parts)
                out = constant(width, 0)
                for i, p in enumerate(parts):
                    out = _or(out, _shl(_resize(self.of(p, each), width), i * each))
                return out
            return unknown(width)
        if _REG.fullmatch(text) is None:
            return unknown(width)
        key = (text, width)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if text in self._busy or text not in self._defs:
            return unknown(width)
        self._busy.add(text)
        try:
            result: Known | None = None
            for st in self._defs[text]:
                k = self._eval(st, width)
                result = k if result is None else _meet(result, k)
                if result.mask == 0:
                    break
        finally:
            self._busy.discard(text)
        out = result if result is not None else unknown(width)
        self._memo[key] = out
        return out

    def _eval(self, st: Statement, width: int) -> Known:
        parts = st.opcode.split(".")
        op = parts[0]
        widths = [int(w) for w in _WIDTH.findall(st.opcode)]
        if not widths:
            return unknown(width)
        ops = st.operands
        w = widths[0]
        try:
            if op == "mov" and len(ops) == 2:
                return _resize(self.of(ops[1], w), width)
            if op == "cvt" and len(ops) == 2 and len(widths) == 2 and not any(
                    p in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "sat")
                    for p in parts[1:]):
                src = self.of(ops[1], widths[1])
                signed = parts[-1].startswith("s")
                return _resize(_resize(src, w, signed), width)
            if op in _BINARY and len(ops) == 3 and len(parts) == 2:
                k = _BINARY[op](self.of(ops[1], w), self.of(ops[2], w))
                return _resize(k, width)
            if op == "not" and len(ops) == 2:
                return _resize(_not(self.of(ops[1], w)), width)
            if op in ("shl", "shr") and len(ops) == 3:
                n = parse_int(ops[2])
                if n is None:
                    return unknown(width)
                a = self.of(ops[1], w)
                k = _shl(a, n) if op == "shl" else _shr(a, n, parts[-1].startswith("s"))
                return _resize(k, width)
        except (ValueError, IndexError):
            return unknown(width)
        return unknown(width)
