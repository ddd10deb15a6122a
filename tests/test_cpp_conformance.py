"""Issue 5, points 2 and 4: the generated C++ conformance tests.

generated/tests/cpp/conformance.cpp holds static_assert tables for every documented value
and encoding (written from the spec by the C++ emitter); it must compile with g++, nvcc
and NVRTC. generated/tests/cpp/compile_fail.cpp evaluates each class of invalid field,
word and helper argument in a constant expression: every such line must be a compile
error whose diagnostic names the field: the compile-error reason named in the line's
"expect:" (a type such as detail::InstrDescF16::m_not_a_multiple_of_16)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import GENERATED, GXX_FLAGS, INCLUDE, NVCC_FLAGS

CONFORMANCE = GENERATED / "conformance.cpp"
COMPILE_FAIL = GENERATED / "compile_fail.cpp"


def test_conformance_tables_are_complete() -> None:
    text = CONFORMANCE.read_text()
    assert text.count("static_assert(") > 1000
    for cls in ("InstrDescTf32", "InstrDescF16", "InstrDescF8f6f4", "InstrDescI8",
                "InstrDescMxf8f6f4", "InstrDescMxf4", "InstrDescMxf4nvf4", "SmemDesc",
                "WgmmaDesc", "ZeroColumnMaskDesc"):
        assert f"namespace conformance_{cls} " in text
    assert text.count("Example ") >= 4 and "base_offset_for(" in text


@pytest.mark.parametrize("std", ["c++17", "c++20"])
def test_conformance_gxx(std: str) -> None:
    gxx = harness.tool("g++")
    flags = [f for f in GXX_FLAGS if not f.startswith("-std")]
    harness.run([gxx, f"-std={std}", *flags, "-fsyntax-only", str(CONFORMANCE)])


def test_conformance_nvcc(tmp_path: Path) -> None:
    nvcc = harness.tool("nvcc")
    harness.run([nvcc, *NVCC_FLAGS, "-arch=sm_100a", "-x", "cu", "-c", str(CONFORMANCE),
                 "-o", str(tmp_path / "conformance.o")])


def test_conformance_nvrtc() -> None:
    ok, log, _ = harness.nvrtc_compile(CONFORMANCE.read_text(), "conformance.cpp", [
        "-arch=compute_100a", "-std=c++17", f"-I{INCLUDE}"])
    assert ok, log
    assert log == "", log


def check_compile_fail(output: str, source: Path) -> None:
    expected = harness.expectations(source)
    assert len(expected) > 100
    blocks = harness.errors_by_line(output, source.name)
    wrong = []
    for line, name in sorted(expected.items()):
        block = "\n".join(blocks.get(line, []))
        if "error" not in block or name not in block:
            wrong.append(f"line {line}: expected an error naming {name}; got:\n{block}")
    assert not wrong, "\n".join(wrong[:5]) + f"\n({len(wrong)} lines wrong)"
    unexpected = sorted(set(blocks) - set(expected))
    assert not unexpected, f"errors on lines without expectations: {unexpected}"


def test_compile_fail_gxx() -> None:
    gxx = harness.tool("g++")
    proc = harness.run([gxx, "-std=c++17", f"-I{INCLUDE}", "-fsyntax-only", "-fmax-errors=0",
                        str(COMPILE_FAIL)], ok=False)
    assert proc.returncode != 0
    check_compile_fail(proc.stdout + proc.stderr, COMPILE_FAIL)


def test_compile_fail_nvcc(tmp_path: Path) -> None:
    nvcc = harness.tool("nvcc")
    proc = harness.run([nvcc, "-std=c++17", f"-I{INCLUDE}", "-x", "cu", "-arch=sm_100a",
                        "-Xcudafe", "--error_limit=100000", "-c", str(COMPILE_FAIL),
                        "-o", str(tmp_path / "x.o")], ok=False)
    assert proc.returncode != 0
    check_compile_fail(proc.stdout + proc.stderr, COMPILE_FAIL)


def test_compile_fail_nvrtc() -> None:
    """NVRTC stops at 100 errors: compile one class's block at a time (other lines blanked,
    so that line numbers stay)."""
    lines = COMPILE_FAIL.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("namespace compile_fail_")]
    assert starts
    log = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        chunk = [line if i < starts[0] or start <= i < end else "" for i, line in enumerate(lines)]
        ok, text, _ = harness.nvrtc_compile("\n".join(chunk) + "\n", COMPILE_FAIL.name, [
            "-arch=compute_100a", "-std=c++17", f"-I{INCLUDE}"])
        assert not ok and "Error limit reached" not in text
        log.append(text)
    check_compile_fail("\n".join(log), COMPILE_FAIL)
