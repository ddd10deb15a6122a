"""Identifier rules shared by validation and the model.

Every name that reaches generated code must be a valid identifier that is
not a keyword in any target language (Python, C++, CUDA C++).
"""

from __future__ import annotations

import keyword
import re
from functools import cache

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
char16_t char32_t class compl concept const consteval constexpr constinit const_cast
continue co_await co_return co_yield decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long mutable
namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert
static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())

# Names the CUDA toolchain or the C preprocessor already own.
CUDA_RESERVED = frozenset("""
NULL assert errno offsetof EOF __global__ __device__ __host__ __shared__ __constant__
warpSize threadIdx blockIdx blockDim gridDim
""".split())


@cache
def identifier_problem(name: str) -> str | None:
    """Why ``name`` cannot be used as an identifier in generated code, or None."""
    if not _IDENT.match(name):
        return f"{name!r} is not a valid identifier"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return f"{name!r} is a Python keyword"
    if name in CPP_KEYWORDS:
        return f"{name!r} is a C++ keyword"
    if name in CUDA_RESERVED:
        return f"{name!r} is reserved by CUDA / the C library"
    if name.startswith("__") or re.match(r"^_[A-Z]", name):
        return f"{name!r} is reserved for the implementation in C++"
    return None


def camel(name: str) -> str:
    """``zero_column_mask_desc`` -> ``ZeroColumnMaskDesc``; ``f8f6f4`` -> ``F8f6f4``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def member_identifiers(field_name: str, names: list[str]) -> list[str]:
    """Enum member identifiers for the CLI spellings of one field.

    Spellings are upper-cased; when any of them starts with a digit (``128b``)
    every member of that enum is prefixed with the field name
    (``SWIZZLE_128B``) so that the enum stays consistent.
    """
    upper = [n.upper() for n in names]
    if any(u[:1].isdigit() for u in upper):
        return [f"{field_name.upper()}_{u}" for u in upper]
    return upper
