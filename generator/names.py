"""Identifier rules shared by validation, the model and the emitters.

Every name that reaches generated code must be a valid identifier that is
not a keyword in any target language (Python, C++, CUDA C++), and must not be
a name the generated code already uses for something else (:data:`RESERVED`):
``validate`` refuses such names with ``file:line:col``, and every emitter
asserts against the same table (:func:`assert_not_reserved`), so the two cannot
drift. ``tests/test_reserved_names.py`` checks that every entry really is a
member or name of the rendered Python and C++.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence
from functools import cache

from ptxgen.errors import printable

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


#: the longest name the spec may give: generated file names are made of names (a
#: descriptor's module, header, docs and test files; C++ names of compile errors) with
#: at most ~60 characters around
MAX_NAME = 100


def length_problem(name: str) -> str | None:
    """Why a name the spec gives is too long (see :data:`MAX_NAME`), or None."""
    if len(name) <= MAX_NAME:
        return None
    return (f"{printable(name, 40)!r} is {len(name)} characters long; allowed: up to "
            f"{MAX_NAME} (names make file names and identifiers, such as test_<name>.py, "
            "and file systems take 255 bytes per name)")


@cache
def identifier_problem(name: str) -> str | None:
    """Why ``name`` cannot be used as an identifier in generated code, or None."""
    if not _IDENT.match(name):
        return f"{printable(name, 60)!r} is not a valid identifier"

    # Hard keywords only: soft keywords (match, case, type, _) stay valid identifiers,
    # and which names are soft depends on the Python version (type from 3.12).
    if keyword.iskeyword(name):
        return f"{name!r} is a Python keyword"
    if name in CPP_KEYWORDS:
        return f"{name!r} is a C++ keyword"
    if name in CUDA_RESERVED:
        return f"{name!r} is reserved by CUDA / the C library"
    if name.startswith("__") or re.match(r"^_[A-Z]", name) or "__" in name:
        return f"{name!r} is reserved for the implementation in C++ (no '__', no '_' + capital)"
    return None


# -- names the generated code uses itself ---------------------------------------------
#
# role -> {name: (language, what the generated code uses it for)}. Roles: ``field`` (a
# descriptor field), ``descriptor`` (a descriptor's name: module, header, docs and test
# file names), ``class`` (a descriptor's class name), ``instruction`` (an instruction id:
# a builder function; a wrapper name: a C++ function), ``operand`` (a qualifier or
# operand name: a builder keyword and a C++ wrapper parameter).

_PY_CLASS = "python", "a member of the generated descriptor classes"
_PY_SCOPE = "python", "a type named in the class body of the generated descriptor classes"
_CPP_STRUCT = "c++", "a member of the generated descriptor structs"

RESERVED: dict[str, dict[str, tuple[str, str]]] = {
    "field": {
        **{n: _PY_CLASS for n in ("replace", "hex", "problems")},
        "self": ("python", "the first parameter of every descriptor constructor"),
        **{n: _PY_SCOPE for n in ("int", "str", "bool", "object", "tuple", "list")},
        **{n: _CPP_STRUCT for n in """
            word_type word_bits reserved_mask fixed_mask fixed_value descriptor_name kind_name
            field_name validate encode encode_unchecked encode_checked decode decode_unchecked
            decode_checked check_word check_word_ masks masks_checked masks_ check names d v w
            variant_name variant_targets since_ptx_isa
            """.split()},
        "later": ("python", "a local of a baseline descriptor constructor that collects "
                            "the fields of a newer layout given to it (to refuse them by name)"),
        **{n: ("python, c++", "a member of the generated descriptor classes and structs")
           for n in ("encode", "decode", "masks")},
        **{n: ("c++", "a member of Field, the field ids of the descriptor structs")
           for n in ("none", "reserved", "fixed", "pattern_start")},
        "n_zero": ("c++", "a compile-error reason of the zero-column mask"),
        "pattern_start_off_boundary_with_zero_base_offset":
            ("c++", "a compile-error reason of base_offset_for"),
    },
    "descriptor": {
        "ptx": ("python", "the module ptxgen.isa.ptx (python/ptx.py) and include/ptxgen/ptx.hpp"),
        "core": ("c++", "the header include/ptxgen/core.hpp"),
        "ptxgen": ("c++", "the header include/ptxgen/ptxgen.hpp"),
        "instructions": ("docs", "docs/instructions.md"),
        "readme": ("docs", "docs/README.md (on case-insensitive file systems)"),
        "ptx_builders": ("python", "tests/test_ptx_builders.py"),
        "ptxas_conformance": ("python", "tests/test_ptxas_conformance.py"),
        "annotations": ("python", "a name of the package ptxgen.isa"),
    },
    "class": {
        **{n: ("python", "a name the generated descriptor modules import")
           for n in ("IntEnum", "ClassVar", "FieldSpec", "ShapeTable", "DescriptorError")},
        "DESCRIPTORS": ("python", "the registry of the package ptxgen.isa"),
        "VARIANTS": ("python", "the registry of layout variants of the package ptxgen.isa"),
        "UnavailableError": ("python", "a name the generated descriptor modules import"),
        **{n: ("c++", "a type of namespace ptxgen (include/ptxgen/core.hpp)")
           for n in ("Errc", "Status", "Result")},
        "ZeroColumnMasks": ("c++", "the result type of ZeroColumnMaskDesc::masks"),
    },
    "instruction": {
        **{n: ("python", "a name of the module ptxgen.isa.ptx")
           for n in ("instruction_set", "support", "descriptor_problems", "cache", "annotations",
                     "_engine", "_decoder")},
        **{n: ("c++", "a name of namespace ptxgen::ptx (include/ptxgen/ptx/target.hpp)")
           for n in ("targets", "imm", "imm_t", "imms", "imms_t", "detail", "fence_operand",
                     "static_desc", "static_desc_v")},
    },
    "operand": {
        "instruction_set": ("python", "the function every builder calls"),
        "_engine": ("python", "the module every builder calls"),
        "ptx_isa": ("python", "the keyword-only PTX ISA version parameter of every builder"),
        "detail": ("c++", "the namespace the wrappers' parameter types and bodies name"),
        "std": ("c++", "the namespace the wrappers' parameter types name"),
    },
}

#: Field names reserved only in descriptors with a zero-column mask: the parameters and
#: locals of the C++ masks_() that reads the mask's fields by their plain names.
RESERVED_ZCM_FIELDS: dict[str, tuple[str, str]] = {
    n: ("c++", "a parameter or local of ZeroColumnMaskDesc::masks_, which reads the fields")
    for n in "m n out s count max_shift ones period first_span start_count column i j "
             "diagnose".split()
}

#: Patterns of generated names made from field names: the C++ setters ``with_<field>()``,
#: the compile-error reasons ``<field>_above_<max>`` / ``<field>_not_...`` and the helper
#: ``<base offset field>_for()`` (with ``_checked`` and ``_``).
RESERVED_FIELD_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"^with_", "the C++ setters are named with_<field>()"),
    (r"_above_", "the C++ compile-error reasons are named <field>_above_<max>"),
    (r"_not_", "the C++ compile-error reasons are named <field>_not_<...>"),
    (r"_for(_checked|_)?$", "the C++ base-offset helpers are named <field>_for()"),
)

#: C++ type names that enum fields produce (``camel(field)``) and the structs already use.
RESERVED_ENUM_CLASSES = frozenset({"Field"})


def reserved_problem(role: str, name: str, *, zero_column_mask: bool = False,
                     enum: bool = False) -> str | None:
    """Why ``name`` (a spec name with the given role) clashes with generated code, or None.

    ``zero_column_mask`` and ``enum`` describe a field: its descriptor has a zero-column
    mask, the field is an enum.
    """
    hit = RESERVED[role].get(name)
    if hit is None and role == "field" and zero_column_mask:
        hit = RESERVED_ZCM_FIELDS.get(name)
    if hit is not None:
        lang, what = hit
        return f"{name!r} is reserved: it is {what} ({lang})"
    if role == "field":
        for pattern, why in RESERVED_FIELD_PATTERNS:
            if re.search(pattern, name):
                return f"{name!r} is reserved: {why}"
        if enum and camel(name) in RESERVED_ENUM_CLASSES:
            return (f"{name!r} is reserved: its enum class {camel(name)} is a member of every "
                    "generated descriptor struct (c++)")
    return None


#: Helper families of an instruction in namespace ptxgen::ptx::detail (the C++ emitter,
#: generator/emit/cpp/wrappers/): ``<id>_count_<operand>``, ``<id>_type_<operand>``,
#: ``<id>_ok_<operand>[_<element>]``, ``<id>_derive_<qualifier>``, ``<id>_gate_of_<operand>``
#: (the value gates of an immediate operand), and ``<id>_combination``.
INSTRUCTION_HELPER_WORDS = ("count", "type", "ok", "derive", "gate")


def instruction_identifiers(ins_id: str, enum_qualifiers: Sequence[str],
                            operands: Sequence[str], wrappers: Sequence[str],
                            overloads: Sequence[str] = ("",), file_stem: str | None = None
                            ) -> list[tuple[str, str, bool, str]]:
    """The identifiers generated for one instruction, as (language, name, prefix, what):
    ``prefix`` means a family of names that start with ``name``. Instruction ids and
    wrapper names share the namespaces ptxgen::ptx (C++) and ptxgen.isa.ptx (Python),
    so two instructions must not generate the same name. ``overloads``: the suffixes of a
    wrapper's overloads by operand choice (``_regs``, ``_tmem``: the concatenated
    ``suffix`` of one alternative per choice operand). ``mma`` with a qualifier
    ``sp_shape`` and ``mma_sp`` with a qualifier ``shape`` would both make
    ``enum class mma_sp_shape`` (:func:`identifier_clashes`). ``file_stem``: the name of
    the instruction's spec file (without ``.yaml``), given for the first instruction of
    each file only: the file's forms share the asm statement functions
    ``<file_stem>_asm<N>`` of namespace ptxgen::ptx::detail.
    tests/test_reserved_names.py checks this list against the rendered header."""
    out = [("python", ins_id, False, "its builder function")]
    out += [("c++", f"{ins_id}_{q}", False, f"the enum of its qualifier {q}")
            for q in enum_qualifiers]
    for op in operands:
        out += [("c++", f"{ins_id}_{op}_{tail}", False, f"a check of its operand {op}")
                for tail in ("length", "element_type", "problem")]
        # a descriptor operand's object checks (desc_args, issue 28): the struct that takes a
        # word or a descriptor object (_is), the struct of its descriptor rules (_check) and
        # the check of an object's kind (_check_kind)
        out += [("c++", f"{ins_id}_{op}_{tail}", False,
                 f"the descriptor object check {tail} of its operand {op}")
                for tail in ("is", "check", "check_kind")]
    out += [("c++", f"{ins_id}_{w}_", True, f"its helpers {ins_id}_{w}_*")
            for w in INSTRUCTION_HELPER_WORDS]
    out.append(("c++", f"{ins_id}_combination", False,
                f"its helper {ins_id}_combination (the combination a form is in)"))
    for w in wrappers:
        for o in dict.fromkeys(f"{w}{s}" for s in overloads):
            out += [("c++", o, False, f"its wrapper {o}"),
                    ("c++", f"{o}_operands", False, f"the operand types of its wrapper {o}"),
                    ("c++", f"{o}_result", False,
                     f"the result struct of its wrapper {o} (a joined d|p pair)"),
                    ("c++", f"{o}_checks", True,
                     f"the qualifier checks {o}_checks that the overloads of {o} share")]
        out += [("c++", f"{w}_forms", True, f"the form tables {w}_forms<N> of its wrapper"),
                ("c++", f"ptxgen_unsupported_target_{w}_is_only_on_", True,
                 f"the unsupported-target functions of its wrapper {w}")]
    if file_stem is not None:
        out.append(("c++", f"{file_stem}_asm", True,
                    f"the shared asm statement functions {file_stem}_asm<N> of its file"))
    return out


def identifier_clashes(owners: Sequence[tuple[str, list[tuple[str, str, bool, str]]]]
                       ) -> list[tuple[int, int, str]]:
    """For identifiers made by :func:`instruction_identifiers` (one list per owner, in
    order), the clashes: (index of the later owner, index of the earlier one, message).
    Two
    names clash when they are equal, or one is a family (a prefix) that the other name or
    family starts with."""
    import bisect

    # the names seen so far: each one's first entry (its insertion order, owner, family or
    # not, what, the name) by (language, name), the families among them, and every name
    # sorted per language (a family clashes with the names it is a prefix of): linear in
    # the names, not quadratic
    first: dict[tuple[str, str], tuple[int, int, bool, str, str]] = {}
    families: set[tuple[str, str]] = set()
    ordered: dict[str, list[str]] = {}
    out: list[tuple[int, int, str]] = []
    count = 0
    for k, (owner, names_) in enumerate(owners):
        found: tuple[int, str] | None = None
        for lang, name, prefix, what in names_:
            hits = []
            if (lang, name) in first:
                hits.append(first[lang, name])
            hits += [first[lang, name[:i]] for i in range(1, len(name))
                     if (lang, name[:i]) in families]
            if prefix:
                names2 = ordered.get(lang, [])
                i = bisect.bisect_left(names2, name)
                while i < len(names2) and names2[i].startswith(name):
                    hits.append(first[lang, names2[i]])
                    i += 1
            if hits:
                _, j, prefix2, what2, name2 = min(hits)
                found = (j, f"instruction id {owner!r}: {name}{'*' if prefix else ''} "
                            f"({what}, {lang}) clashes with {name2}"
                            f"{'*' if prefix2 else ''} ({what2}) of {owners[j][0]!r}")
                break
            if (lang, name) not in first:
                first[lang, name] = (count, k, prefix, what, name)
                bisect.insort(ordered.setdefault(lang, []), name)
            if prefix:
                families.add((lang, name))
            count += 1
        if found:
            out.append((k, *found))
    return out


class ReservedNameError(ValueError):
    """An emitter was handed a name that validation should have refused."""


def assert_not_reserved(role: str, names: list[str] | tuple[str, ...], **context: bool) -> None:
    """What every emitter calls on the names it turns into code (see :data:`RESERVED`)."""
    for name in names:
        problem = identifier_problem(name) or reserved_problem(role, name, **context)
        if problem:
            raise ReservedNameError(f"{role} {problem}; 'ptxgen validate' refuses it")


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """``" (did you mean 'x'?)"`` for the choice closest to ``word`` (the same word in
    another case first), or ``""``."""
    if not word or not choices or len(word) > 200:  # no suggestion for a text that long
        return ""
    folded = [c for c in choices if c.lower() == word.lower()]
    if folded:
        return f" (did you mean {folded[0]!r}?)"
    nearest = _nearest_number(word, choices)
    if nearest is not None:
        return f" (did you mean {nearest!r}?)"
    import difflib  # only on the error path

    lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(word.lower(), list(lower), n=1, cutoff=0.75)
    return f" (did you mean {lower[close[0]]!r}?)" if close else ""


def _nearest_number(word: str, choices: list[str] | tuple[str, ...]) -> str | None:
    """For a word with numbers in it (``.m64n129``): the choice that is the same text
    with the numbers closest in value (``.m64n128``, not ``.m64n216``), a difference in
    an earlier number counting more; None when no choice has the same text around its
    numbers."""
    import re

    split = re.compile(r"(\d+)")
    parts = split.split(word.lower())
    if len(parts) == 1:
        return None
    best: tuple[tuple[int, ...], str] | None = None
    for choice in choices:
        # the choice may be the start of the word (.m64n128 for .m64n129k16)
        other = split.split(choice.lower())
        mine = parts[:len(other)]
        if len(other) == 1 or len(mine) != len(other) or other[0:-1:2] != mine[0:-1:2] \
                or not (mine[-1].startswith(other[-1]) if len(other) < len(parts)
                        else mine[-1] == other[-1]):
            continue
        key = (len(parts) - len(other), *(abs(int(a) - int(b))
                                          for a, b in zip(mine[1::2], other[1::2], strict=True)))
        if best is None or key < best[0]:
            best = (key, choice)
    return best[1] if best else None


@cache  # pure; one per qualifier value
def enum_member(qualifier: str, value: str) -> str:
    """The C++ enum member of a qualifier value (``scale_vec::1X`` -> ``scale_vec_1X``; a
    value that is no identifier on its own is prefixed with the qualifier: ``shape_128x256b``)."""
    member = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", value))
    if member[:1].isdigit() or identifier_problem(member):
        member = f"{qualifier}_{member}"
    return member


@cache  # pure; ~8,500 calls for ~90 names per generate
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
