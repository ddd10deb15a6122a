"""The instruction forms the GPU tests exercise, read from the generated headers.

The forms of ``mma.sync`` that sm_90a supports are taken from
generated/include/ptxgen/ptx/mma_sync.hpp itself (each form's PTX string and its target
gate), so that every form the header offers for sm_90a is run; ``SM90_MMA_EXPECTED`` is an
independent list written from the PTX ISA (9.7.14.5.14, "Target ISA notes") that the header
must match. Pure Python, no GPU: imported at collection time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "generated" / "include"
PTX_DIR = INCLUDE / "ptxgen" / "ptx"

#: The target whose forms run on the H100, and the PTX ISA that nvcc 13.0 emits.
TARGET = "sm_90a"
PTX_ISA = 90

#: Bits of one element of each PTX type (the register packing unit).
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
        "s4": 4, "u4": 4, "b1": 1, "f64": 64, "f32": 32, "s32": 32}


@cache
def targets() -> list[str]:
    text = (PTX_DIR / "target.hpp").read_text()
    body = re.search(r"targets\[\] = \{(.*?)\};", text, re.S)
    assert body, "no targets[] in target.hpp"
    return re.findall(r'"(sm_\w+)"', body.group(1))


_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.S)


def literal_bytes(text: str, name: str) -> bytes:
    """The bytes of the char array ``name`` that ``text`` defines as adjacent narrow string
    literals (``name[] = "..." "...";``), escapes decoded as a C++ compiler does: octal,
    and the backslash, quote, question mark and newline the generator writes."""
    m = re.search(r"\b" + name + r'\[\] =\s*((?:"(?:[^"\\]|\\.)*"\s*)+);', text, re.S)
    assert m, name

    def one(e: re.Match[str]) -> str:
        x = e.group(1)
        return chr(int(x, 8)) if x[0] in "01234567" else {"n": "\n"}.get(x, x)

    body = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
    return _ESCAPE.sub(one, body).encode("latin-1")


def packed(data: bytes, width: int) -> list[int]:
    """A packed table's numbers: ``width`` bytes each, least significant first."""
    assert width > 0 and len(data) % width == 0, (len(data), width)
    return [int.from_bytes(data[i:i + width], "little") for i in range(0, len(data), width)]


def text_at(data: bytes, offset: int) -> str:
    """The NUL-terminated text at ``offset``."""
    return data[offset:data.index(0, offset)].decode()


def opcodes(forms_text: str, function: str, count: int | None = None) -> list[str]:
    """The opcode of each form of the forms function ``function`` in the text of a forms
    header, in the order of its table ("" for a form left out of a selection): two
    pieces each, NUL-terminated texts in ``<function>_opcode_pieces`` at the offsets in
    ``<function>_opcode`` (packed; ``count``: the number of forms, else read from the
    statement table, which holds one number per form and takes the fewest bytes)."""
    pieces = literal_bytes(forms_text, function + "_opcode_pieces")
    offsets = literal_bytes(forms_text, function + "_opcode")
    if count is None:  # the statement numbers: 1 byte each unless there are > 255
        statements = literal_bytes(forms_text, function + "_statement")
        m = re.search(r"packed_at<(\d+)>\(" + function + "_statement", forms_text)
        assert m, function
        count = len(statements) // int(m.group(1))
    assert count and len(offsets) % (2 * count) == 0, (function, count, len(offsets))
    n = packed(offsets, len(offsets) // (2 * count))
    return [text_at(pieces, n[i]) + text_at(pieces, n[i + 1]) for i in range(0, len(n), 2)]


def _gated_forms(header: str, function: str) -> list[tuple[str, bool]]:
    """(PTX string, runs on sm_90a with PTX ISA 9.0) of each form of the forms function
    ``function``: its opcode texts (see ``opcodes``; the forms header beside ``header``),
    in the order of its table of number * 256 + support class (``<function>_table::table``
    in the wrappers of ``header``, ``<family>.device.hpp``, packed in ``width`` bytes
    each), whose classes' ``gates`` are
    {mask, from, since}."""
    forms = (PTX_DIR / header.replace(".hpp", ".forms.hpp")).read_text()
    main = (PTX_DIR / header.replace(".hpp", ".device.hpp")).read_text()
    struct = re.search(r"struct " + function + r"_table \{(.*?)\n\};", main, re.S)
    assert struct, (header, function)
    width = re.search(r"int width = (\d+);", struct.group(1))
    gates = re.search(r"gates\[\] = \{(.*?)\n    \};", struct.group(1), re.S)
    assert width and gates, (header, function)
    entries = packed(literal_bytes(struct.group(1), "table"), int(width.group(1)))
    names = opcodes(forms, function, len(entries))
    assert len(names) == len(entries), (header, function)
    bit = targets().index(TARGET)
    ok_class: dict[int, bool] = {}
    for k, m in enumerate(re.finditer(r"\{(0x[0-9a-f]+)ull, (\d+), (\d+)\}", gates.group(1))):
        mask, since = int(m.group(1), 16), int(m.group(3))
        ok_class[k] = bool((mask >> bit) & 1) and since <= PTX_ISA
    assert ok_class, (header, function)
    return [(name, ok_class.get(e % 256, False)) for name, e in zip(names, entries, strict=True)]


@dataclass(frozen=True)
class MmaForm:
    name: str          # the PTX instruction: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
    shape: str
    alayout: str
    blayout: str
    satfinite: bool
    dtype: str
    atype: str
    btype: str
    ctype: str
    bitop: str         # none, xor, and
    m: int
    n: int
    k: int
    rnd: str = "none"  # the .f64 forms' explicit rounding: rn, rz, rm, rp

    @property
    def quadpair(self) -> bool:
        """m8n8k4 with .f16: four 8x8x4 products, one per quad pair."""
        return self.shape == "m8n8k4" and self.atype == "f16"

    @property
    def test_id(self) -> str:
        return self.name.removeprefix("mma.sync.aligned.")


def parse_mma(name: str) -> MmaForm | None:
    toks = name.removeprefix("mma.sync.aligned.").split(".")
    if any(t.startswith("kind::") or t in ("block_scale",) for t in toks):
        return None
    rnd = "none"
    if toks[-1] in ("rn", "rz", "rm", "rp"):
        # the .f64 forms with an explicit rounding (issue 25): those of m16n8k4 (issue 29);
        # the other shapes' are the same instruction with more K, left out of the GPU run
        if toks[0] != "m16n8k4":
            return None
        rnd, toks = toks[-1], toks[:-1]
    shape, al, bl, *rest = toks
    sat = rest[0] == "satfinite"
    if sat:
        rest = rest[1:]
    bitop = "none"
    if rest[-1] == "popc":
        bitop, rest = rest[-2], rest[:-2]
    dtype, atype, btype, ctype = rest
    m, n, k = (int(x) for x in re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape).groups())  # type: ignore[union-attr]
    return MmaForm(name, shape, al, bl, sat, dtype, atype, btype, ctype, bitop, m, n, k, rnd)


@cache
def mma_forms() -> list[MmaForm]:
    """Every mma.sync form of the header that runs on sm_90a."""
    out = []
    for name, ok in _gated_forms("mma_sync.hpp", "mma_sync_forms0"):
        form = parse_mma(name)
        if ok and form is not None:
            out.append(form)
    return out


def mma_inc_line(i: int, f: MmaForm) -> str:
    op = {"none": "none", "xor": "bitop_xor", "and": "bitop_and"}[f.bitop]
    kernel = "mma_quadpair" if f.quadpair else "mma_standard"
    return (f"PTXGEN_MMA_FORM(f{i}, {kernel}, {f.shape}, {f.alayout}, {f.blayout}, {f.dtype}, "
            f"{f.atype}, {f.btype}, {f.ctype}, {'true' if f.satfinite else 'false'}, {op}, "
            f"{f.rnd}, {f.m}, {BITS[f.atype]}, {BITS[f.btype]}, {BITS[f.ctype]}, {BITS[f.dtype]}, "
            f"\"{f.name}\")")


def mma_inc() -> str:
    return "\n".join(mma_inc_line(i, f) for i, f in enumerate(mma_forms())) + "\n"


def _expected_sm90_mma() -> set[str]:
    """mma.sync forms on sm_90 by the PTX ISA, written independently of the spec."""
    out: set[str] = set()
    p = "mma.sync.aligned."
    for al in ("row", "col"):                       # m8n8k4 .f16: any layouts (sm_70+)
        for bl in ("row", "col"):
            for d, c in (("f16", "f16"), ("f32", "f16"), ("f32", "f32")):
                out.add(f"{p}m8n8k4.{al}.{bl}.{d}.f16.f16.{c}")
    for shape in ("m16n8k8", "m16n8k16"):
        out |= {f"{p}{shape}.row.col.f16.f16.f16.f16", f"{p}{shape}.row.col.f32.f16.f16.f32",
                f"{p}{shape}.row.col.f32.bf16.bf16.f32"}
    out |= {f"{p}{s}.row.col.f32.tf32.tf32.f32" for s in ("m16n8k4", "m16n8k8")}
    for shape in ("m16n8k16", "m16n8k32"):          # fp8 (sm_89+; k16 and .f16 D from PTX 8.7)
        for a in ("e4m3", "e5m2"):
            for b in ("e4m3", "e5m2"):
                out |= {f"{p}{shape}.row.col.f32.{a}.{b}.f32",
                        f"{p}{shape}.row.col.f16.{a}.{b}.f16"}
    out |= {f"{p}{s}.row.col.f64.f64.f64.f64" for s in ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")}
    # the explicit roundings of .f64 (PTX ISA 7.8, written last), those of m16n8k4 only
    out |= {f"{p}m16n8k4.row.col.f64.f64.f64.f64.{r}" for r in ("rn", "rz", "rm", "rp")}
    for shapes, types in ((("m8n8k16", "m16n8k16", "m16n8k32"), ("u8", "s8")),
                          (("m8n8k32", "m16n8k32", "m16n8k64"), ("u4", "s4"))):
        for shape in shapes:
            for a in types:
                for b in types:
                    for sat in ("", "satfinite."):
                        out.add(f"{p}{shape}.row.col.{sat}s32.{a}.{b}.s32")
    for shape in ("m8n8k128", "m16n8k128", "m16n8k256"):
        for op in ("xor", "and"):
            out.add(f"{p}{shape}.row.col.s32.b1.b1.s32.{op}.popc")
    return out


SM90_MMA_EXPECTED = frozenset(_expected_sm90_mma())


# -- ldmatrix / stmatrix ----------------------------------------------------------------

@dataclass(frozen=True)
class MatrixForm:
    op: str       # ldmatrix or stmatrix
    num: int      # 1, 2, 4
    trans: bool
    ss: str       # none (generic address), shared, shared_cta

    @property
    def name(self) -> str:
        ss = {"none": "", "shared": ".shared", "shared_cta": ".shared::cta"}[self.ss]
        return (f"{self.op}.sync.aligned.m8n8.x{self.num}{'.trans' if self.trans else ''}"
                f"{ss}.b16")


MATRIX_FORMS = [MatrixForm(op, num, trans, ss)
                for op in ("ldmatrix", "stmatrix") for num in (1, 2, 4)
                for trans in (False, True) for ss in ("none", "shared", "shared_cta")]


@cache
def matrix_header_forms() -> dict[str, bool]:
    out = dict(_gated_forms("ldmatrix.hpp", "ldmatrix_forms0"))
    out.update(_gated_forms("ldmatrix.hpp", "stmatrix_forms0"))
    return out


# -- wgmma.mma_async --------------------------------------------------------------------

#: K of one wgmma instruction by input type (32 bytes of K).
WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "u8": 32, "s8": 32,
           "b1": 256}

#: Swizzle modes by WgmmaDesc::Swizzle code.
SWIZZLES = {"none": 0, "128b": 1, "64b": 2, "32b": 3}


@dataclass(frozen=True)
class WgmmaCase:
    n: int
    dtype: str
    atype: str
    btype: str
    a_src: str            # desc (A in shared memory) or regs (A in registers)
    satfinite: bool = False
    scale_a: int = 1
    scale_b: int = 1
    trans_a: int = 0      # 1: A is M-major in shared memory (f16/bf16, descriptor A only)
    trans_b: int = 0      # 1: B is N-major

    @property
    def family(self) -> int:
        if self.atype in ("f16", "bf16"):
            return 0
        return 1 if self.atype in ("tf32", "e4m3", "e5m2") else 2

    @property
    def bitop(self) -> str:
        return "and" if self.atype == "b1" else "none"

    @property
    def k(self) -> int:
        return WGMMA_K[self.atype]

    @property
    def name(self) -> str:
        s = f"m64n{self.n}k{self.k}.{'satfinite.' if self.satfinite else ''}{self.dtype}"
        s += f".{self.atype}.{self.btype}{'.and.popc' if self.bitop == 'and' else ''}.{self.a_src}"
        if self.scale_a != 1 or self.scale_b != 1:
            s += f".scale{self.scale_a:+d}{self.scale_b:+d}"
        if self.trans_a or self.trans_b:
            s += f".trans{self.trans_a}{self.trans_b}"
        return s


def _wgmma_cases() -> list[WgmmaCase]:
    out: list[WgmmaCase] = []
    for src in ("desc", "regs"):
        out += [WgmmaCase(64, "f16", "f16", "f16", src), WgmmaCase(64, "f32", "f16", "f16", src),
                WgmmaCase(64, "f32", "bf16", "bf16", src),
                WgmmaCase(64, "f32", "tf32", "tf32", src)]
        for a in ("e4m3", "e5m2"):
            for b in ("e4m3", "e5m2"):
                out += [WgmmaCase(64, "f16", a, b, src), WgmmaCase(64, "f32", a, b, src)]
        for a in ("u8", "s8"):
            for b in ("u8", "s8"):
                out += [WgmmaCase(64, "s32", a, b, src),
                        WgmmaCase(64, "s32", a, b, src, satfinite=True)]
        out.append(WgmmaCase(64, "s32", "b1", "b1", src))
    # other N, the immediates, and M/N-major (transposed) operands
    for n in (8, 16, 136, 256):
        out.append(WgmmaCase(n, "f32", "bf16", "bf16", "desc"))
    out.append(WgmmaCase(256, "f32", "bf16", "bf16", "regs"))
    out.append(WgmmaCase(24, "s32", "s8", "s8", "desc"))
    out.append(WgmmaCase(64, "f32", "bf16", "bf16", "desc", scale_a=-1))
    out.append(WgmmaCase(64, "f32", "bf16", "bf16", "regs", scale_b=-1))
    out.append(WgmmaCase(64, "f32", "e4m3", "e4m3", "desc", scale_a=-1, scale_b=-1))
    out.append(WgmmaCase(64, "f32", "tf32", "tf32", "regs", scale_a=-1))
    for ta, tb in ((1, 0), (0, 1), (1, 1)):
        out.append(WgmmaCase(64, "f32", "bf16", "bf16", "desc", trans_a=ta, trans_b=tb))
        out.append(WgmmaCase(64, "f16", "f16", "f16", "desc", trans_a=ta, trans_b=tb))
    out.append(WgmmaCase(128, "f32", "bf16", "bf16", "desc", trans_a=1, trans_b=1))
    out.append(WgmmaCase(64, "f32", "bf16", "bf16", "regs", trans_b=1))
    out.append(WgmmaCase(128, "f32", "f16", "f16", "regs", trans_b=1))
    return out


WGMMA_CASES = _wgmma_cases()


def wgmma_inc() -> str:
    lines = []
    for c in WGMMA_CASES:
        op = "bitop_and" if c.bitop == "and" else "none"
        lines.append(f"PTXGEN_WGMMA_CASE({c.n}, {c.dtype}, {c.atype}, {c.btype}, "
                     f"{'true' if c.satfinite else 'false'}, {op}, {c.family}, "
                     f"{'true' if c.a_src == 'regs' else 'false'}, {c.scale_a}, {c.scale_b}, "
                     f"{c.trans_a}, {c.trans_b}, \"{c.name}\")")
    return "\n".join(lines) + "\n"


# -- mma.sp / mma.sp::ordered_metadata --------------------------------------------------

#: Number of sparsity-selector values by (shape, A type), from the PTX ISA's sparse
#: fragment layouts (9.7.14.6.2): the metadata of a group of four threads is held by
#: 4 / count of them, and the selector names which (threads 4 / count * sel ...).
SP_SELECTORS = {("m16n8k16", "f16"): 4, ("m16n8k16", "bf16"): 4, ("m16n8k8", "tf32"): 4,
                ("m16n8k32", "f16"): 2, ("m16n8k32", "bf16"): 2, ("m16n8k16", "tf32"): 2,
                ("m16n8k32", "u8"): 2, ("m16n8k32", "s8"): 2, ("m16n8k64", "u4"): 2,
                ("m16n8k64", "s4"): 2, ("m16n8k64", "u8"): 1, ("m16n8k64", "s8"): 1,
                ("m16n8k128", "u4"): 1, ("m16n8k128", "s4"): 1, ("m16n8k64", "e4m3"): 1,
                ("m16n8k64", "e5m2"): 1}


@dataclass(frozen=True)
class MmaSpForm:
    name: str          # mma.sp{::ordered_metadata}.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
    ordered: bool
    shape: str
    satfinite: bool
    dtype: str
    atype: str
    btype: str
    ctype: str
    m: int
    n: int
    k: int             # K of the (uncompressed) sparse A; the A fragment holds K / 2 columns

    @property
    def selectors(self) -> int:
        return SP_SELECTORS[(self.shape, self.atype)]

    @property
    def test_id(self) -> str:
        return self.name.replace(".sync.aligned.", ".").replace("::ordered_metadata", ".om")


def parse_mma_sp(name: str) -> MmaSpForm | None:
    op, _, rest = name.partition(".sync.aligned.")
    toks = rest.split(".")
    if any(t.startswith("kind::") or t == "block_scale" for t in toks):
        return None
    shape, _al, _bl, *tail = toks
    sat = tail[0] == "satfinite"
    if sat:
        tail = tail[1:]
    dtype, atype, btype, ctype = tail
    m, n, k = (int(x) for x in re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape).groups())  # type: ignore[union-attr]
    return MmaSpForm(name, op.endswith("::ordered_metadata"), shape, sat, dtype, atype, btype,
                     ctype, m, n, k)


@cache
def mma_sp_forms() -> list[MmaSpForm]:
    """Every mma.sp / mma.sp::ordered_metadata form of the header that runs on sm_90a
    (the block-scaled and .kind forms are sm_100+ / sm_120 only)."""
    out = []
    for struct in ("mma_sp_forms0", "mma_sp_ordered_metadata_forms0"):
        for name, ok in _gated_forms("mma_sp.hpp", struct):
            form = parse_mma_sp(name)
            if ok and form is not None:
                out.append(form)
    return out


def _expected_sm90_mma_sp() -> set[str]:
    """Sparse mma forms on sm_90 by the PTX ISA (9.7.14.6.3), independent of the spec."""
    out: set[str] = set()
    for op in ("mma.sp", "mma.sp::ordered_metadata"):
        p = f"{op}.sync.aligned."
        for shape in ("m16n8k16", "m16n8k32"):
            out |= {f"{p}{shape}.row.col.f16.f16.f16.f16", f"{p}{shape}.row.col.f32.f16.f16.f32",
                    f"{p}{shape}.row.col.f32.bf16.bf16.f32"}
        out |= {f"{p}{s}.row.col.f32.tf32.tf32.f32" for s in ("m16n8k8", "m16n8k16")}
        out |= {f"{p}m16n8k64.row.col.f32.{a}.{b}.f32"
                for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")}
        for shapes, types in ((("m16n8k32", "m16n8k64"), ("u8", "s8")),
                              (("m16n8k64", "m16n8k128"), ("u4", "s4"))):
            for shape in shapes:
                for a in types:
                    for b in types:
                        for sat in ("", "satfinite."):
                            out.add(f"{p}{shape}.row.col.{sat}s32.{a}.{b}.s32")
    return out


SM90_MMA_SP_EXPECTED = frozenset(_expected_sm90_mma_sp())

#: C / D registers per thread and their C++ type, by accumulator type (m16n8).
_ACC = {"f16": (2, "std::uint32_t"), "f32": (4, "float"), "s32": (4, "std::int32_t")}


def mma_sp_inc() -> str:
    lines = []
    for i, f in enumerate(mma_sp_forms()):
        na = f.m * (f.k // 2) * BITS[f.atype] // (32 * 32)  # A: M x K/2 over 32 lanes
        nb = f.k * f.n * BITS[f.btype] // (32 * 32)
        nd, dt = _ACC[f.dtype]
        nc, ct = _ACC[f.ctype]
        prefix, fn = (("mma_sp_ordered_metadata", "mma_sp_ordered_metadata") if f.ordered
                      else ("mma_sp", "mma_sp"))
        lines.append(
            f"PTXGEN_MMA_SP_FORM(f{i}, {fn}, {prefix}, {f.shape}, {f.dtype}, {f.atype}, "
            f"{f.btype}, {f.ctype}, {'true' if f.satfinite else 'false'}, {dt}, {nd}, {ct}, "
            f"{nc}, {na}, {nb}, {f.m}, {f.k // 2}, {f.k}, {BITS[f.atype]}, {BITS[f.btype]}, "
            f"{BITS[f.ctype]}, {BITS[f.dtype]}, {f.selectors}, \"{f.name}\")")
    return "\n".join(lines) + "\n"


# -- wgmma.mma_async.sp -----------------------------------------------------------------

#: K of one sparse wgmma instruction by input type (the dense K doubled: 64 bytes of B).
WGMMA_SP_K = {"f16": 32, "bf16": 32, "tf32": 16, "e4m3": 64, "e5m2": 64, "u8": 64, "s8": 64}

#: The wrapper structs of generated/include/ptxgen/ptx/wgmma.hpp holding the sparse forms:
#: (struct, A source); forms0/1: .f16 / .bf16, 2/3: .tf32 and FP8, 4/5: .u8 / .s8.
WGMMA_SP_STRUCTS = [(f"wgmma_mma_async_sp_forms{i}", "regs" if i % 2 else "desc")
                    for i in range(6)]

#: Instructions per GPU test (2: across 128-byte swizzle rows and 64-byte atoms of B).
WGMMA_SP_KSTEPS = 2

#: Kernel libraries the sparse cases are split into (built in parallel).
WGMMA_SP_PARTS = 8


@dataclass(frozen=True)
class WgmmaSpCase:
    n: int
    dtype: str
    atype: str
    btype: str
    a_src: str            # desc (A in shared memory) or regs (A in registers)
    satfinite: bool = False
    scale_a: int = 1
    scale_b: int = 1
    trans_b: int = 0      # 1: B is N-major (f16 / bf16)

    @property
    def family(self) -> int:
        if self.atype in ("f16", "bf16"):
            return 0
        return 1 if self.atype in ("tf32", "e4m3", "e5m2") else 2

    @property
    def k(self) -> int:
        return WGMMA_SP_K[self.atype]

    @property
    def selectors(self) -> int:
        """sp-sel values: 0..1 for .f16 / .bf16 / .tf32 (threads T0,T1 or T2,T3 of each group
        of four hold the metadata), 0 for the 8-bit types (all four threads)."""
        return 2 if self.atype in ("f16", "bf16", "tf32") else 1

    @property
    def form(self) -> str:
        """The PTX instruction."""
        return (f"wgmma.mma_async.sp.sync.aligned.m64n{self.n}k{self.k}"
                f"{'.satfinite' if self.satfinite else ''}.{self.dtype}.{self.atype}.{self.btype}")

    @property
    def name(self) -> str:
        s = f"m64n{self.n}k{self.k}.{'satfinite.' if self.satfinite else ''}{self.dtype}"
        s += f".{self.atype}.{self.btype}.{self.a_src}"
        if self.scale_a != 1 or self.scale_b != 1:
            s += f".scale{self.scale_a:+d}{self.scale_b:+d}"
        if self.trans_b:
            s += ".transb"
        return s


def parse_wgmma_sp(name: str, a_src: str) -> WgmmaSpCase:
    toks = name.removeprefix("wgmma.mma_async.sp.sync.aligned.").split(".")
    shape, *rest = toks
    sat = rest[0] == "satfinite"
    if sat:
        rest = rest[1:]
    dtype, atype, btype = rest
    n = int(re.fullmatch(r"m64n(\d+)k\d+", shape).group(1))  # type: ignore[union-attr]
    case = WgmmaSpCase(n, dtype, atype, btype, a_src, sat)
    assert case.form == name, (case.form, name)
    return case


@cache
def wgmma_sp_forms() -> list[WgmmaSpCase]:
    """Every wgmma.mma_async.sp form of the header that runs on sm_90a, A from a descriptor
    and A from registers (1,056)."""
    out = []
    for struct, src in WGMMA_SP_STRUCTS:
        for name, ok in _gated_forms("wgmma.hpp", struct):
            if ok:
                out.append(parse_wgmma_sp(name, src))
    return out


def _expected_sm90_wgmma_sp() -> set[str]:
    """Sparse wgmma forms by the PTX ISA (9.7.15.6.3, "Syntax"), independent of the spec."""
    p = "wgmma.mma_async.sp.sync.aligned."
    all_n = range(8, 257, 8)
    int_n = [8, 16, 24] + list(range(32, 257, 16))
    out: set[str] = set()
    for n in all_n:
        out |= {f"{p}m64n{n}k32.f16.f16.f16", f"{p}m64n{n}k32.f32.f16.f16",
                f"{p}m64n{n}k32.f32.bf16.bf16", f"{p}m64n{n}k16.f32.tf32.tf32"}
        out |= {f"{p}m64n{n}k64.{d}.{a}.{b}" for d in ("f16", "f32")
                for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")}
    for n in int_n:
        out |= {f"{p}m64n{n}k64{sat}.s32.{a}.{b}" for sat in ("", ".satfinite")
                for a in ("u8", "s8") for b in ("u8", "s8")}
    return out


SM90_WGMMA_SP_EXPECTED = frozenset(_expected_sm90_wgmma_sp())


@cache
def wgmma_sp_cases() -> list[WgmmaSpCase]:
    """The forms, then the negating immediates and N-major B on a few of them."""
    out = list(wgmma_sp_forms())
    for src in ("desc", "regs"):
        out.append(WgmmaSpCase(64, "f32", "bf16", "bf16", src, scale_a=-1))
        out.append(WgmmaSpCase(64, "f32", "e4m3", "e5m2", src, scale_b=-1))
        out.append(WgmmaSpCase(32, "f32", "tf32", "tf32", src, scale_a=-1, scale_b=-1))
        for n in (64, 256):
            out.append(WgmmaSpCase(n, "f32", "bf16", "bf16", src, trans_b=1))
            out.append(WgmmaSpCase(n, "f16", "f16", "f16", src, trans_b=1))
    return out


def wgmma_sp_part(index: int) -> int:
    """The library (0 .. WGMMA_SP_PARTS - 1) that holds case ``index``."""
    return index % WGMMA_SP_PARTS


def wgmma_sp_sample() -> list[int]:
    """CI's compile check of the sparse wgmma kernels (tests/test_gpu_kernels_build.py):
    the indices of a covering sample of wgmma_sp_cases(): every (A source, dtype, atype,
    btype, .satfinite) and every N once, and every case with negating
    immediates or N-major B."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for i, c in enumerate(wgmma_sp_cases()):
        keys = {(c.a_src, c.dtype, c.atype, c.btype, c.satfinite), (c.n,)}
        if keys - seen or c.scale_a != 1 or c.scale_b != 1 or c.trans_b:
            seen |= keys
            out.append(i)
    return out


def wgmma_sp_inc(part: int | None = None) -> str:
    """The PTXGEN_WGMMA_SP_CASE lines of library ``part`` (None: CI's sample,
    wgmma_sp_sample())."""
    sample = set(wgmma_sp_sample()) if part is None else None
    lines = []
    for i, c in enumerate(wgmma_sp_cases()):
        if (i not in sample) if sample is not None else wgmma_sp_part(i) != part:
            continue
        lines.append(f"PTXGEN_WGMMA_SP_CASE({i}, {c.n}, {c.dtype}, {c.atype}, {c.btype}, "
                     f"{'true' if c.satfinite else 'false'}, {c.family}, "
                     f"{'true' if c.a_src == 'regs' else 'false'}, {c.selectors}, {c.scale_a}, "
                     f"{c.scale_b}, {c.trans_b}, \"{c.name}\")")
    return "\n".join(lines) + "\n"

