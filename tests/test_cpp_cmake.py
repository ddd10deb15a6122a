"""Issue 5, point 3: the CMake INTERFACE target ptxgen::ptxgen, consumed through
find_package(ptxgen) (from an install prefix and from the build folder), through
add_subdirectory and through FetchContent (a git repository fetched at configure time), by
the tiny project in tests/cpp/cmake_consumer (C++, and CUDA when nvcc is there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cpp import harness

CONSUMER = harness.HERE / "cmake_consumer"
EXPECTED = "instr_desc=0x8400490 smem_desc=0x400000000040 error=not_a_multiple field=m"


def configure_build_run(cmake: str, build: Path, *defines: str) -> None:
    harness.run([cmake, "-S", str(CONSUMER), "-B", str(build), *defines])
    harness.run([cmake, "--build", str(build)])
    out = harness.run([str(build / "consumer")]).stdout
    assert out.strip() == EXPECTED


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """ptxgen configured (build folder) and installed (prefix)."""
    cmake = harness.tool("cmake")
    tmp = tmp_path_factory.mktemp("cmake")
    build, prefix = tmp / "build", tmp / "prefix"
    harness.run([cmake, "-S", str(harness.ROOT), "-B", str(build)])
    harness.run([cmake, "--install", str(build), "--prefix", str(prefix)])
    return cmake, build, prefix


def test_install_layout(installed: tuple[str, Path, Path]) -> None:
    _, _, prefix = installed
    headers = sorted(p.name for p in (prefix / "include" / "ptxgen").glob("*.hpp"))
    assert headers == sorted(p.name for p in (harness.INCLUDE / "ptxgen").glob("*.hpp"))
    assert (prefix / "share" / "cmake" / "ptxgen" / "ptxgenConfig.cmake").is_file()


def test_find_package_from_prefix(installed: tuple[str, Path, Path], tmp_path: Path) -> None:
    cmake, _, prefix = installed
    defines = [f"-DCMAKE_PREFIX_PATH={prefix}"]
    if harness.in_ci() or harness.has("nvcc"):
        harness.tool("nvcc")
        defines.append("-DCONSUMER_CUDA=ON")
    configure_build_run(cmake, tmp_path / "consumer", *defines)


def test_find_package_from_build_folder(installed: tuple[str, Path, Path], tmp_path: Path) -> None:
    cmake, build, _ = installed
    configure_build_run(cmake, tmp_path / "consumer", f"-Dptxgen_DIR={build}")


def test_add_subdirectory(tmp_path: Path) -> None:
    cmake = harness.tool("cmake")
    configure_build_run(cmake, tmp_path / "consumer", f"-DPTXGEN_SOURCE_DIR={harness.ROOT}")


def test_fetch_content_from_a_git_repository(tmp_path: Path) -> None:
    """Issue 28: FetchContent_Declare(ptxgen GIT_REPOSITORY ... GIT_TAG ...) as the README
    shows it. The repository is this checkout's CMake project (CMakeLists.txt, cmake/,
    generated/include) committed and tagged in a new git repository, so that the files
    under test are today's, committed or not; CMake clones it with git."""
    import shutil
    import subprocess

    cmake, git = harness.tool("cmake"), harness.tool("git")
    repo = tmp_path / "ptxgen.git"
    shutil.copytree(harness.ROOT / "cmake", repo / "cmake")
    shutil.copytree(harness.ROOT / "generated" / "include", repo / "generated" / "include")
    shutil.copy(harness.ROOT / "CMakeLists.txt", repo / "CMakeLists.txt")
    ident = ["-c", "user.name=ptxgen tests", "-c", "user.email=tests@ptxgen.invalid"]
    for args in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-q", "-m", "snapshot"],
                 ["tag", "v-test"]):
        subprocess.run([git, *args], cwd=repo, check=True, capture_output=True)
    build = tmp_path / "consumer"
    configure_build_run(cmake, build, f"-DPTXGEN_GIT=file://{repo}", "-DPTXGEN_TAG=v-test")
    fetched = build / "_deps" / "ptxgen-src"
    assert (fetched / ".git").exists() and (fetched / "generated" / "include").is_dir()


def test_version_matches_the_python_package() -> None:
    pyproject = (harness.ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, flags=re.M)
    cmakelists = (harness.ROOT / "CMakeLists.txt").read_text()
    cmake = re.search(r"project\(ptxgen VERSION (\S+) ", cmakelists)
    assert version and cmake and cmake.group(1) == version.group(1)
