"""Shared helpers of the C++ test drivers (tests/test_cpp_*.py).

Locates the toolchains (g++, nvcc, NVRTC from PyPI, CUTLASS from PyPI, CMake) and runs
them. A missing tool skips its tests on a developer machine but fails them in CI
(``CI=true``), where issue 5 requires every one of them to run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "generated" / "include"
GENERATED = ROOT / "generated" / "tests" / "cpp"
HERE = Path(__file__).resolve().parent

#: The targets issue 5 names; "f" and "a" targets compile the family/arch-specific variants.
NVCC_ARCHES = ("sm_80", "sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_110f", "sm_120a")

#: Issue 5 asks for -Wall -Wextra -Werror; the stricter warnings users often add come too.
GXX_FLAGS = ("-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion",
             "-Wsign-conversion", "-Wshadow", "-Wold-style-cast", "-Wuseless-cast",
             f"-I{INCLUDE}")
NVCC_FLAGS = ("-std=c++17", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror",
              f"-I{INCLUDE}")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(what: str) -> None:
    """Skip (developer machine) or fail (CI) a test whose tool is missing."""
    if in_ci():
        pytest.fail(f"{what} is required in CI (issue 5: the C++ tests never skip there)")
    pytest.skip(f"{what} is not available")


def has(name: str) -> bool:
    return shutil.which(name) is not None


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} (not on the PATH)")
    assert path is not None
    return path


def run(cmd: list[str], *, ok: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run a command; with ``ok`` fail the test (showing the output) unless it succeeds."""
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if ok and proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def gencode(arch: str) -> str:
    """``sm_90a`` -> ``-gencode=arch=compute_90a,code=sm_90a``."""
    return f"-gencode=arch=compute_{arch[3:]},code={arch}"


# -- NVRTC (nvidia-cuda-nvrtc + cuda-bindings) -------------------------------------------

def nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc as module
    except ImportError:
        unavailable("NVRTC (pip install -e '.[test]': nvidia-cuda-nvrtc, cuda-bindings)")
    return module


def nvrtc_compile(source: str, name: str, options: list[str]) -> tuple[bool, str, str]:
    """Compile ``source`` with NVRTC: (success, log, PTX)."""
    lib = nvrtc()

    def check(result: Any) -> Any:
        err, *rest = result
        if err != lib.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC: {err}")
        return rest[0] if rest else None

    prog = check(lib.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []))
    try:
        opts = [o.encode() for o in options]
        (status,) = lib.nvrtcCompileProgram(prog, len(opts), opts)
        log = b" " * check(lib.nvrtcGetProgramLogSize(prog))
        check(lib.nvrtcGetProgramLog(prog, log))
        ptx = ""
        if status == lib.nvrtcResult.NVRTC_SUCCESS:
            buf = b" " * check(lib.nvrtcGetPTXSize(prog))
            check(lib.nvrtcGetPTX(prog, buf))
            ptx = buf.rstrip(b"\0").decode()
        return (status == lib.nvrtcResult.NVRTC_SUCCESS, log.rstrip(b"\0").decode().strip(),
                ptx)
    finally:
        lib.nvrtcDestroyProgram(prog)


# -- CUTLASS (nvidia-cutlass, headers only) -------------------------------------------------

def cutlass_include() -> Path:
    """CUTLASS's include folder inside the installed nvidia-cutlass wheel."""
    try:
        import cutlass_library
    except ImportError:
        unavailable("CUTLASS (pip install -e '.[test]': nvidia-cutlass)")
    include = Path(cutlass_library.__file__).resolve().parent / "source" / "include"
    if not (include / "cute" / "arch" / "mma_sm100_desc.hpp").is_file():
        pytest.fail(f"nvidia-cutlass is installed but {include} has no cute/arch headers")
    return include


# -- compiler diagnostics -----------------------------------------------------------------

_EXPECT = re.compile(r"//\s*expect:\s*(\w+)")


def expectations(source: Path) -> dict[int, str]:
    """{line: name} for every line of ``source`` that ends in ``// expect: NAME``."""
    return {i: m.group(1) for i, line in enumerate(source.read_text().splitlines(), 1)
            if (m := _EXPECT.search(line)) and not line.lstrip().startswith(("*", "/*"))}


def errors_by_line(output: str, source_name: str) -> dict[int, list[str]]:
    """Group a compiler's output by the line of ``source_name`` each error stems from.

    g++ names the source line first ("file:LINE:COL: in 'constexpr' expansion of ...")
    and the error later; nvcc names the source line in the error ("file(LINE): error")
    and the called function in the notes after it. Each error block runs until the next
    reference to a line of ``source_name``.
    """
    here = re.compile(rf"{re.escape(source_name)}(?::(\d+):\d+:|\((\d+)\):)")
    blocks: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        m = here.search(line)
        if m:
            number = int(m.group(1) or m.group(2))
            current = blocks.setdefault(number, [])
        if current is not None:
            current.append(line)
    return blocks
