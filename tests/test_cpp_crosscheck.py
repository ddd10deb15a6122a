"""Issue 5, point 4: the Python classes (ptxgen.isa) and the C++ encoders agree on the same
sampled field sets.

generated/tests/cpp/crosscheck.cpp (written by the C++ emitter) answers requests on stdin
through the checked run-time API. For every descriptor class this test sends field sets
(valid, with one invalid field, and random), words (valid, with one bad bit, random),
Table 41 pattern starts and Table 45 (M, N) pairs, and compares each answer with what
the Python class says: the same word, the same fields, or an error on the same field.
Everything the test knows about the fields (allowed values, steps, maxima) it learns
from the Python classes themselves.
"""

from __future__ import annotations

import importlib
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cpp import harness
from cpp.harness import GENERATED, GXX_FLAGS
from cpp.pyfields import FieldInfo, accepts, baseline, field_infos, shape_pairs

from ptxgen.isa import DESCRIPTORS, VARIANTS, DescriptorError

#: Per class and request kind; PTXGEN_FULL_MATRIX=1 (benchmarks/full_matrices.py): 1,500.
SAMPLES = 1500 if os.environ.get("PTXGEN_FULL_MATRIX") == "1" else 300
SEED = 20240505

# the baseline classes, then the variants' (the order of the generated driver)
CLASSES = [cls for kinds in DESCRIPTORS.values() for cls in kinds.values()]
CLASSES += [cls for variants in VARIANTS.values() for *_, classes in variants
            for cls in classes.values()]


def valid_value(rng: random.Random, f: FieldInfo) -> int:
    if f.valid:
        return rng.choice(f.valid)
    return rng.randrange(0, f.maximum + 1, f.step)


def valid_values(rng: random.Random, cls: Any, infos: list[FieldInfo]) -> dict[str, int]:
    """A valid field set: each field at random, the dimensions of a shape as a pair."""
    values = {f.name: valid_value(rng, f) for f in infos}
    if getattr(cls, "SHAPES", None) is not None:
        values.update(zip(cls.SHAPES.fields, rng.choice(shape_pairs(cls)), strict=True))
    return values


_INVALID: dict[tuple[str, int, tuple[int, ...]], list[int]] = {}


def invalid_value(rng: random.Random, f: FieldInfo) -> int:
    if f.valid:  # the codes the field refuses, listed once per field (16-bit fields too)
        key = (f.name, f.width, tuple(f.valid))
        bad = _INVALID.get(key)
        if bad is None:
            valid = set(f.valid)
            bad = _INVALID[key] = [c for c in range((1 << f.width) + 2) if c not in valid]
        return rng.choice(bad)
    choices = [f.maximum + f.step, f.maximum + rng.randrange(1, 1 << 20)]
    if f.step > 1:
        choices.append(rng.randrange(0, f.maximum // f.step) * f.step + rng.randrange(1, f.step))
    return rng.choice(choices)


class Driver:
    """The compiled crosscheck program, fed all requests at once."""

    def __init__(self, exe: Path) -> None:
        self.exe = exe

    def ask(self, requests: list[str]) -> list[str]:
        proc = subprocess.run([str(self.exe)], input="\n".join(requests) + "\n",
                              capture_output=True, text=True, check=True, timeout=300)
        answers = proc.stdout.splitlines()
        assert len(answers) == len(requests), proc.stdout[-2000:]
        return answers


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Driver:
    gxx = harness.tool("g++")
    exe = tmp_path_factory.mktemp("crosscheck") / "crosscheck"
    harness.run([gxx, *GXX_FLAGS, "-O1", str(GENERATED / "crosscheck.cpp"), "-o", str(exe)])
    return Driver(exe)


def class_index(cls: Any) -> int:
    return CLASSES.index(cls)


def python_encode(cls: Any, values: dict[str, int]) -> str:
    try:
        return f"ok {cls(**values).encode():x}"
    except DescriptorError as exc:
        return f"err {exc.field}"


def strip_errc(answer: str) -> str:
    """'err <errc> <field>' -> 'err <field>' (Python has no error codes)."""
    parts = answer.split()
    return f"err {parts[2]}" if parts[0] == "err" else answer


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_encode_agrees(cls: Any, driver: Driver) -> None:
    rng = random.Random(f"{SEED}-encode-{cls.__name__}")
    infos = field_infos(cls)
    sets = []
    for i in range(SAMPLES):
        values = valid_values(rng, cls, infos)
        if i % 3 == 1:  # exactly one invalid field (or, for m / n, maybe no shape)
            f = rng.choice(infos)
            values[f.name] = invalid_value(rng, f)
        elif i % 3 == 2:  # anything that fits the C++ member (uint32_t / enum code)
            for f in infos:
                if rng.random() < 0.3:
                    values[f.name] = rng.randrange(0, (1 << f.width) * max(f.step, 2))
        sets.append(values)
    requests = [f"E {class_index(cls)} " + " ".join(str(v[f.name]) for f in infos) for v in sets]
    answers = driver.ask(requests)
    for values, answer in zip(sets, answers, strict=True):
        assert strip_errc(answer) == python_encode(cls, values), values


def first_invalid(cls: Any, infos: list[FieldInfo], values: list[int]) -> str | None:
    """The first field (in bit order) the Python class refuses on its own; then, for a
    class with shapes, the dimension of a pair that no shape has."""
    base = baseline(cls)
    shapes = getattr(cls, "SHAPES", None)
    for f, v in zip(infos, values, strict=True):
        # a decoded dimension always fits its field: its shape is checked last
        if shapes is not None and f.name in shapes.fields:
            continue
        if not accepts(cls, base, f.name, v):
            return f.name
    if shapes is not None:
        first, second = (values[[f.name for f in infos].index(n)] for n in shapes.fields)
        if first not in shapes.runs:
            return shapes.fields[0]
        if not shapes.allows(first, second):
            return shapes.fields[1]
    return None


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_decode_agrees(cls: Any, driver: Driver) -> None:
    rng = random.Random(f"{SEED}-decode-{cls.__name__}")
    infos = field_infos(cls)
    bits = cls.WORD_BITS
    words = []
    for i in range(SAMPLES):
        word = cls(**valid_values(rng, cls, infos)).encode()
        if i % 3 == 1:
            word ^= 1 << rng.randrange(bits)
        elif i % 3 == 2:
            word = rng.getrandbits(bits) & ~(cls.RESERVED_MASK if rng.random() < 0.7 else 0)
            word = (word & ~cls.FIXED_MASK) | cls.FIXED_VALUE if rng.random() < 0.7 else word
        words.append(word)
    index = class_index(cls)
    answers = driver.ask([f"D {index} {w:x}" for w in words])
    raw = driver.ask([f"U {index} {w:x}" for w in words])
    for word, answer, fields in zip(words, answers, raw, strict=True):
        try:
            desc = cls.decode(word)
        except DescriptorError as exc:
            parts = answer.split()
            assert parts[0] == "err", (hex(word), answer, exc)
            if exc.field in ("reserved", "fixed"):
                assert parts[2] == exc.field, (hex(word), answer, exc)
            else:  # C++ reports the first invalid field in bit order
                values = [int(x) for x in fields.split()[1:]]
                assert parts[2] == first_invalid(cls, infos, values), (hex(word), answer)
            continue
        expected = "ok " + " ".join(str(int(getattr(desc, f.name))) for f in infos)
        assert answer == expected, hex(word)
        assert fields == expected, hex(word)


SWIZZLED = [cls for cls in CLASSES if cls.VARIANT is None and  # the helper is Table 41's
            hasattr(importlib.import_module(cls.__module__), "base_offset")]


def test_some_classes_have_helpers() -> None:
    assert [c.__name__ for c in SWIZZLED] == ["SmemDesc"]
    assert [c.__name__ for c in MASKED] == ["ZeroColumnMaskDesc"]


@pytest.mark.parametrize("cls", SWIZZLED, ids=lambda c: c.__name__)
def test_base_offset_agrees(cls: Any, driver: Driver) -> None:
    base_offset = importlib.import_module(cls.__module__).base_offset
    rng = random.Random(f"{SEED}-base-offset")
    cases = []
    for _ in range(SAMPLES * 2):
        kind = rng.random()
        start = (rng.randrange(0, 1 << 12) * 128 if kind < 0.5 else
                 rng.randrange(0, 64) * 256 if kind < 0.7 else
                 rng.getrandbits(rng.randrange(1, 40)))
        cases.append((start, rng.randrange(0, 8)))
    answers = driver.ask([f"B {class_index(cls)} {s} {c}" for s, c in cases])
    for (start, code), answer in zip(cases, answers, strict=True):
        try:
            expected = f"ok {base_offset(start, code)}"
        except DescriptorError as exc:
            expected = f"err {exc.field}"
        assert strip_errc(answer) == expected, (hex(start), code)


MASKED = [cls for cls in CLASSES if hasattr(cls, "masks")]


@pytest.mark.parametrize("cls", MASKED, ids=lambda c: c.__name__)
def test_masks_agree(cls: Any, driver: Driver) -> None:
    rng = random.Random(f"{SEED}-masks")
    infos = field_infos(cls)
    cases = []
    for i in range(SAMPLES):
        desc = cls(**{f.name: valid_value(rng, f) for f in infos})
        if i % 4 == 0:  # short spans, so that the patterns repeat within N
            desc = cls(**{**{f.name: int(getattr(desc, f.name)) for f in infos},
                          "skip_span": rng.randrange(0, 8), "use_span": rng.randrange(0, 8),
                          "non_zero_mask": 1})
        m = rng.choice([128, 64, 32, 128, 64, 32, 96, 0])
        count = {128: 1, 64: 2, 32: 4}.get(m, 1)
        n = rng.choice([count * rng.randrange(1, 512 // count + 1), count * 8 + 1, 0, 256, 512])
        cases.append((desc, m, n))
    answers = driver.ask([f"Z {class_index(cls)} {d.encode():x} {m} {n}" for d, m, n in cases])
    for (desc, m, n), answer in zip(cases, answers, strict=True):
        try:
            masks = desc.masks(m, n)
        except DescriptorError as exc:
            assert strip_errc(answer) == f"err {exc.field}", (desc, m, n)
            continue
        size = n // len(masks)
        words = [(mask >> (64 * k)) & (2**64 - 1) for mask in masks
                 for k in range((size + 63) // 64)]
        assert answer == f"ok {len(masks)} {size} " + " ".join(f"{w:x}" for w in words), \
            (desc, m, n)
