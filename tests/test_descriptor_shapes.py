"""Issue 12: the M x N of the tcgen05 instruction descriptor are the tcgen05.mma shapes of
PTX ISA Table 39 ("Various combinations of .kind and shapes", 9.7.16.2.1), checked
everywhere a descriptor is built or checked: the Python classes, ``ptxgen encode``,
``descriptor_problems`` (which knows .cta_group, .ws and .sp) and, in C++, the
constexpr classes (generated/tests/cpp/compile_fail.cpp, test_cpp_conformance.py) and
``tcgen05_mma_idesc_problem`` (test_cpp_descriptor_rules.py).

The oracle is the table itself, transcribed below row by row from the PTX ISA document
(the seeds do not contain it), independently of spec/instructions/tcgen05_mma.yaml."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from ptxgen.isa import DESCRIPTORS, DescriptorError
from ptxgen.isa.instr_desc import InstrDescF16
from ptxgen.isa.ptx import descriptor_problems


def _steps(first: int, last: int, step: int) -> frozenset[int]:
    return frozenset(range(first, last + 1, step))


N8 = _steps(8, 256, 8)  # "N = {8, 16, 24, ... 256} steps of 8"
N16 = _steps(16, 256, 16)  # "N = {16, 32, ... 256} steps of 16"
N_I8_1 = frozenset({8, 16, 24, 32}) | _steps(48, 256, 16)  # "{8, 16, 24, 32, 48, ... 256}"
N_I8_2 = _steps(32, 256, 32)  # "N = {32, 64, ... 256} steps of 32"
PLAIN = ("f16", "tf32", "f8f6f4")
SCALED = ("mxf8f6f4", "mxf4", "mxf4nvf4")

# (kinds, .ws, .cta_group, .sp, M values, N values): every row of Table 39 that is not
# "Invalid" (.ws exists with .cta_group::1 only, and not for the block-scaled kinds).
TABLE_39: list[tuple[tuple[str, ...], bool, int, bool, frozenset[int], frozenset[int]]] = [
    *[(PLAIN, False, 1, sp, frozenset({64, 128}), N8) for sp in (False, True)],
    *[(PLAIN, False, 2, sp, frozenset({128, 256}), N16) for sp in (False, True)],
    *[(("i8",), False, 1, sp, frozenset({64, 128}), N_I8_1) for sp in (False, True)],
    *[(("i8",), False, 2, sp, frozenset({128, 256}), N_I8_2) for sp in (False, True)],
    (PLAIN + ("i8",), True, 1, False, frozenset({32, 64, 128}), frozenset({64, 128, 256})),
    (PLAIN + ("i8",), True, 1, True, frozenset({32, 64, 128}), frozenset({64, 128})),
    *[(SCALED, False, 1, sp, frozenset({128}), N8) for sp in (False, True)],
    (SCALED, False, 2, False, frozenset({128, 256}), N16),
    (SCALED, False, 2, True, frozenset({256}), N16),
]

KINDS = sorted(DESCRIPTORS["instr_desc"])
GRID = list(itertools.product(range(0, 512, 16), range(0, 512, 8)))  # every M, N encodable


def table_pairs(kind: str, ws: bool | None = None, cta_group: int | None = None,
                sp: bool | None = None) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for kinds, row_ws, row_cg, row_sp, ms, ns in TABLE_39:
        if kind in kinds and ws in (None, row_ws) and cta_group in (None, row_cg) and \
                sp in (None, row_sp):
            out |= set(itertools.product(ms, ns))
    return out


def fields_for(kind: str, **changes: int | str) -> dict[str, int | str]:
    """A valid field set of the kind (its first enum codes), with changes."""
    cls = DESCRIPTORS["instr_desc"][kind]
    base: dict[str, int | str] = {f.name: min(f.names.values()) for f in cls.FIELDS if f.names}
    return {**base, **changes}


def accepts(kind: str, m: int, n: int) -> bool:
    try:
        DESCRIPTORS["instr_desc"][kind](**fields_for(kind, m=m, n=n))
    except DescriptorError as exc:
        assert exc.field in ("m", "n"), exc
        return False
    return True


@pytest.mark.parametrize("kind", KINDS)
def test_the_classes_accept_exactly_the_shapes_of_their_kind(kind: str) -> None:
    """Every M x N the fields can encode: accepted exactly when some row of Table 39 (any
    .cta_group, .ws, dense or sparse) has it for the kind."""
    expected = table_pairs(kind)
    accepted = {(m, n) for m, n in GRID if accepts(kind, m, n)}
    assert accepted == expected


@pytest.mark.parametrize(("kind", "m", "n", "field", "allowed"), [
    ("f16", 0, 0, "m", "32, 64, 128 or 256"),  # left out (0): no shape has M = 0
    ("f16", 128, 0, "n", "8 to 256 in steps of 8"),
    ("f16", 496, 504, "m", "32, 64, 128 or 256"),
    ("f16", 128, 12, "n", "8 to 256 in steps of 8"),
    ("f16", 256, 8, "n", "with m = 256: 16 to 256 in steps of 16"),
    ("f16", 32, 8, "n", "with m = 32: 64, 128 or 256"),
    ("i8", 128, 40, "n", "with m = 128: 8 to 32 in steps of 8 or 48 to 256 in steps of 16"),
    ("mxf8f6f4", 384, 64, "m", "128 or 256"),
    ("mxf4", 64, 64, "m", "128 or 256"),
])
def test_a_refused_shape_names_the_field(kind: str, m: int, n: int, field: str,
                                         allowed: str) -> None:
    with pytest.raises(DescriptorError) as err:
        DESCRIPTORS["instr_desc"][kind](**fields_for(kind, m=m, n=n))
    assert err.value.field == field
    assert allowed in err.value.allowed


def test_m_and_n_have_no_default() -> None:
    """0 is no M or N: the Python classes require both (the C++ T{} leaves them at 0 and
    encode() refuses it, see compile_fail.cpp)."""
    with pytest.raises(TypeError, match="'n' and 'm'"):
        InstrDescF16(dtype=1)  # type: ignore[call-arg]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ptxgen", *args], capture_output=True,
                          text=True, check=False)


@pytest.mark.parametrize(("args", "needles"), [
    (["--kind", "f16"], ["m: 0 (left out, so 0) is not allowed", "32, 64, 128 or 256"]),
    (["--kind", "f16", "n=504", "m=496"], ["m: 496 is not allowed"]),
    (["--kind", "f16", "m=128"], ["n: 0 (left out, so 0) is not allowed"]),
    (["--kind", "f16", "n=8", "m=256"], ["n: 8 is not allowed", "with m = 256"]),
    (["--kind", "mxf8f6f4", "atype=e4m3", "btype=e4m3", "scale_type=ue8m0", "n=64", "m=384"],
     ["m: 384 is not allowed", "128 or 256"]),
])
def test_encode_refuses_shapes_naming_the_field(args: list[str], needles: list[str]) -> None:
    """'Fields left out are 0': with M or N left out that is a refusal naming the field."""
    proc = run_cli("encode", "instr_desc", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_decode_refuses_a_word_without_a_shape() -> None:
    proc = run_cli("decode", "instr_desc", "--kind", "f16", "0x00000010")
    assert proc.returncode == 2
    assert "m: 0 is not allowed" in proc.stderr


OPCODES = {  # (ws, cta_group, sp) -> the opcode prefix of that variant
    (False, 1, False): "tcgen05.mma.cta_group::1", (False, 2, False): "tcgen05.mma.cta_group::2",
    (False, 1, True): "tcgen05.mma.sp.cta_group::1",
    (False, 2, True): "tcgen05.mma.sp.cta_group::2",
    (True, 1, False): "tcgen05.mma.ws.cta_group::1",
    (True, 1, True): "tcgen05.mma.ws.sp.cta_group::1",
}
SUFFIX = {"mxf8f6f4": ".block_scale", "mxf4": ".block_scale",
          "mxf4nvf4": ".block_scale.block32"}


def variants(kind: str) -> list[tuple[bool, int, bool]]:
    return [v for v in OPCODES if table_pairs(kind, *v)]


@pytest.mark.parametrize("kind", KINDS)
def test_descriptor_problems_know_cta_group_ws_and_sp(kind: str) -> None:
    """For every tcgen05.mma variant of the kind and every M x N the kind has: a shape
    problem exactly when the variant's row of Table 39 does not have it."""
    cls = DESCRIPTORS["instr_desc"][kind]
    assert variants(kind)
    for ws, cta_group, sp in variants(kind):
        opcode = f"{OPCODES[ws, cta_group, sp]}.kind::{kind}{SUFFIX.get(kind, '')}"
        allowed = table_pairs(kind, ws, cta_group, sp)
        for m, n in sorted(table_pairs(kind)):
            word = cls(**fields_for(kind, m=m, n=n, sparsity=int(sp))).encode()
            shape = [p for p in descriptor_problems(opcode, idesc=word) if "[shape-" in p]
            assert bool(shape) == ((m, n) not in allowed), (opcode, m, n, shape)


def test_m_256_with_cta_group_1_is_a_problem() -> None:
    word = InstrDescF16(dtype=1, m=256, n=64).encode()
    assert descriptor_problems("tcgen05.mma.cta_group::2.kind::f16", idesc=word) == []
    (problem,) = descriptor_problems("tcgen05.mma.cta_group::1.kind::f16", idesc=word)
    assert problem.endswith("(idesc: m = 256, n = 64) [shape-cta-group-1]")
    assert "M = 64 or 128" in problem
