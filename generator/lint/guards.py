"""Which targets an ``#if`` branch is compiled for: preprocessor conditions per target.

A device pass of nvcc for ``sm_XY`` defines ``__CUDA_ARCH__`` = XY0; for the
architecture-specific target ``sm_XYa`` also ``__CUDA_ARCH_FEAT_SMXY_ALL`` and
``__CUDA_ARCH_SPECIFIC__`` = XY0, and for ``sm_XYa`` and the family-specific ``sm_XYf``
``__CUDA_ARCH_FAMILY_SPECIFIC__`` = XY0 (CUDA 12.9 and later). ``__CUDACC__`` and
``__NVCC__`` are defined. Any other macro (a library's own, ``CUTE_ARCH_..._ENABLED``)
is unknown: the condition is evaluated in three values (true, false, unknown), so a branch
is ``True`` for a target only where the known macros decide it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|"
                    r"(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[()!<>+\-*/%~&|^?:,]))")

Value = int | None  # None: unknown


def environment(target: str) -> dict[str, int]:
    """The macros a device pass for ``target`` (``sm_100a``) defines."""
    m = re.fullmatch(r"sm_(\d+)([af]?)", target)
    env = {"__CUDACC__": 1, "__NVCC__": 1}
    if m is None:
        return env
    number, suffix = int(m.group(1)), m.group(2)
    arch = number * 10
    env["__CUDA_ARCH__"] = arch
    if suffix == "a":
        env[f"__CUDA_ARCH_FEAT_SM{number}_ALL"] = 1
        env["__CUDA_ARCH_SPECIFIC__"] = arch
    if suffix in ("a", "f"):
        env["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
    return env


_KNOWN = re.compile(r"__CUDA_ARCH__|__CUDA_ARCH_FEAT_SM\d+_ALL|__CUDA_ARCH_SPECIFIC__|"
                    r"__CUDA_ARCH_FAMILY_SPECIFIC__|__CUDACC__|__NVCC__")


class _Parser:
    def __init__(self, text: str, env: Mapping[str, int]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError(f"cannot read {text[pos:]!r}")
            kind = m.lastgroup or "op"
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0
        self.env = env

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    # precedence climbing: ?: || && | ^ & == != < > <= >= << >> + - * / %
    _LEVELS = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
               ("<<", ">>"), ("+", "-"), ("*", "/", "%"))

    def expr(self) -> Value:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.expr()
            if self.peek() != ":":
                raise ValueError("expected ':'")
            self.take()
            b = self.expr()
            if cond is None:
                return a if a == b else None
            return a if cond else b
        return cond

    def binary(self, level: int) -> Value:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = _apply(op, left, right)
        return left

    def unary(self) -> Value:
        tok = self.peek()
        if tok in ("!", "-", "+", "~"):
            self.take()
            v = self.unary()
            if v is None:
                return None
            return {"!": int(not v), "-": -v, "+": v, "~": ~v}[tok]
        return self.primary()

    def primary(self) -> Value:
        kind, tok = self.take()
        if tok == "(":
            v = self.expr()
            if self.peek() != ")":
                raise ValueError("expected ')'")
            self.take()
            return v
        if kind == "num":
            return int(tok, 0)
        if kind == "id":
            if tok == "defined":
                paren = self.peek() == "("
                if paren:
                    self.take()
                name = self.take()[1]
                if paren:
                    self.take()
                if name in self.env:
                    return 1
                return 0 if _KNOWN.fullmatch(name) else None
            if self.peek() == "(":  # a function-like macro: unknown
                depth = 0
                while self.i < len(self.tokens):
                    t = self.take()[1]
                    depth += t == "("
                    depth -= t == ")"
                    if depth == 0:
                        break
                return None
            if tok in self.env:
                return self.env[tok]
            return 0 if _KNOWN.fullmatch(tok) else None
        raise ValueError(f"unexpected {tok!r}")


def _apply(op: str, a: Value, b: Value) -> Value:
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if (a is not None and a != 0) or (b is not None and b != 0):
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    if op in ("/", "%") and b == 0:
        return None
    result: int = {
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
        "<<": lambda: a << b, ">>": lambda: a >> b, "+": lambda: a + b, "-": lambda: a - b,
        "*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a % b,
    }[op]()
    return result


def evaluate(condition: str, env: Mapping[str, int]) -> bool | None:
    """Whether ``condition`` holds under ``env`` (None: it depends on unknown macros, or
    it cannot be read)."""
    try:
        p = _Parser(condition, env)
        v = p.expr()
        if p.i != len(p.tokens):
            return None
    except (ValueError, IndexError):
        return None
    return None if v is None else bool(v)


def allowed(guard: tuple[str, ...], target: str) -> bool | None:
    """Whether a branch inside the conditions ``guard`` is compiled for ``target``."""
    env = environment(target)
    result: bool | None = True
    for cond in guard:
        v = evaluate(cond, env)
        if v is False:
            return False
        if v is None:
            result = None
    return result
