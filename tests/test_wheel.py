"""Issue 28: the wheel is the product. The sdist and the wheel are built once (``python -m
build``: the wheel is built from the sdist, so the sdist is proved complete), the wheel is
installed in a bare virtual environment (no system site packages, no checkout on the path)
and used from a folder outside any project as a user would: ``--include-dir`` three ways,
``generate`` and ``check`` with the installed spec and templates, a kernel compiled by
nvcc with ``-I$(ptxgen --include-dir)`` and the CMake consumer of test_cpp_cmake.py built
through ``find_package(ptxgen CONFIG)`` from the pip install.

About 20 s in CI (most of it the isolated builds of ``python -m build``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from cpp import harness

from conftest import ROOT

CONSUMER = harness.HERE / "cmake_consumer"
EXPECTED = "instr_desc=0x8400490 smem_desc=0x400000000040 error=not_a_multiple field=m"

#: The product's data folders: where each is in the checkout and in the installed package.
DATA = {"templates": ("templates", "**/*.j2"),
        "spec": ("spec", "**/*.yaml"),
        "spec/schema": ("spec/schema", "*.json"),
        "include": ("generated/include", "**/*.hpp"),
        "cmake": ("cmake/pip", "*.cmake")}


#: What the sdist is made from (the rest of the checkout - tests, docs, examples - is not
#: part of the product).
SOURCES = ("pyproject.toml", "README.md", "MANIFEST.in", "CMakeLists.txt", "cmake", "generator",
           "templates", "spec", "generated/include", "generated/python")


def _env() -> dict[str, str]:
    """The environment without anything that would put the checkout on the path."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def _run(cmd: list[str | Path], cwd: Path | None = None,
         ok: bool = True) -> subprocess.CompletedProcess[str]:
    return harness.run([str(c) for c in cmd], ok=ok, cwd=cwd, env=_env())


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel), the wheel built from the sdist."""
    out = tmp_path_factory.mktemp("dist")
    # built from a copy of the sources (a build writes egg-info and staging folders into
    # its source tree; the checkout is left alone)
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        copy(ROOT / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                         if (ROOT / name).is_dir() else {}))
    _run([sys.executable, "-m", "build", "--outdir", out, src])
    (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return sdist, wheel


@pytest.fixture(scope="module")
def bare(dist: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a bare venv with the wheel installed (and its three dependencies,
    from the index or pip's cache)."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    _run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install",
          "--no-input", "--disable-pip-version-check", dist[1]])
    return venv / "bin"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside any project (no spec/ in it or above)."""
    assert not any((p / "spec").is_dir() for p in (tmp_path, *tmp_path.parents))
    return tmp_path


def _expected_data() -> set[str]:
    """The data files the package must hold, as paths inside ptxgen/."""
    out = set()
    for inside, (checkout, pattern) in DATA.items():
        base = ROOT / checkout
        out |= {f"{inside}/{p.relative_to(base).as_posix()}" for p in base.glob(pattern)}
    return out


def test_the_wheel_holds_the_product(dist: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(dist[1]).namelist())
    held = {n.removeprefix("ptxgen/") for n in names if n.startswith("ptxgen/")
            and n.split("/")[1] in ("templates", "spec", "include", "cmake")}
    assert held == _expected_data()
    assert "ptxgen/isa/__init__.py" in names and "ptxgen/cli.py" in names
    # every module of the package (generator/), subpackages included
    modules = {f"ptxgen/{p.relative_to(ROOT / 'generator').as_posix()}"
               for p in (ROOT / "generator").rglob("*.py") if "__pycache__" not in p.parts}
    assert modules <= names, sorted(modules - names)
    assert not [n for n in names if "__pycache__" in n]


def test_the_sdist_is_also_the_cmake_project(dist: tuple[Path, Path]) -> None:
    with tarfile.open(dist[0]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for need in ("CMakeLists.txt", "cmake/ptxgenConfig.cmake.in", "pyproject.toml",
                 "generated/include/ptxgen/ptxgen.hpp", "spec/schema/descriptor.schema.json"):
        assert need in names, need


def test_include_dir_three_ways(bare: Path, outside: Path) -> None:
    got = {_run([bare / "ptxgen", "--include-dir"], outside).stdout,
           _run([bare / "python", "-m", "ptxgen", "--include-dir"], outside).stdout,
           _run([bare / "python", "-c", "import ptxgen; print(ptxgen.get_include())"],
                outside).stdout}
    assert len(got) == 1
    include = Path(got.pop().strip())
    assert include.is_relative_to(bare.parent) and include.name == "include"
    for header in (ROOT / "generated" / "include").rglob("*.hpp"):
        rel = header.relative_to(ROOT / "generated" / "include")
        assert (include / rel).read_bytes() == header.read_bytes(), rel


def test_generate_and_check_with_the_installed_spec(bare: Path, outside: Path) -> None:
    res = _run([bare / "ptxgen", "generate", "--out", "X"], outside)
    note = (f"ptxgen: no project here (no spec/ folder in {outside} or above); using the "
            "installed spec ")
    assert res.stderr.startswith(note) and res.stderr.count("\n") == 1, res.stderr
    assert res.stdout.startswith("wrote ") and res.stdout.strip().endswith(" files to X")
    include = Path(_run([bare / "ptxgen", "--include-dir"], outside).stdout.strip())
    for header in include.rglob("*.hpp"):
        rel = header.relative_to(include)
        assert (outside / "X" / "include" / rel).read_bytes() == header.read_bytes(), rel
    assert _run([bare / "ptxgen", "check", "--out", "X"], outside).stdout == ""
    res = _run([bare / "ptxgen", "check", "--full", "--out", "X"], outside)
    assert res.returncode == 0 and res.stdout == ""
    # never into the installed package: without --out the command is refused
    res = _run([bare / "ptxgen", "generate"], outside, ok=False)
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1, res.stderr
    assert res.stderr.endswith("(or --out DIR, with the installed spec)\n"), res.stderr


def test_a_kernel_and_a_host_program_from_the_include_dir(bare: Path, outside: Path) -> None:
    include = _run([bare / "ptxgen", "--include-dir"], outside).stdout.strip()
    nvcc, gxx = harness.tool("nvcc"), harness.tool("g++")
    _run([nvcc, "-std=c++17", "-arch=sm_90a", "-c", CONSUMER / "kernel.cu", f"-I{include}",
          "-o", outside / "kernel.o"])
    assert (outside / "kernel.o").stat().st_size > 0
    _run([gxx, "-std=c++17", f"-I{include}", CONSUMER / "main.cpp", "-o", outside / "main"])
    assert _run([outside / "main"]).stdout.strip() == EXPECTED


@pytest.mark.parametrize("how", ["ptxgen_DIR", "CMAKE_PREFIX_PATH"])
def test_find_package_from_the_pip_install(bare: Path, outside: Path, how: str) -> None:
    """``-Dptxgen_DIR=$(ptxgen --cmake-dir)``, or the cmake folder as a prefix."""
    cmake = harness.tool("cmake")
    where = _run([bare / "ptxgen", "--cmake-dir"], outside).stdout.strip()
    build = outside / "build"
    _run([cmake, "-S", CONSUMER, "-B", build, f"-D{how}={where}"])
    _run([cmake, "--build", build])
    assert _run([build / "consumer"]).stdout.strip() == EXPECTED


def test_the_cmake_files_carry_the_python_package_version() -> None:
    import re

    version = re.search(r'^version = "(\d+)\.(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text(),
                        flags=re.M)
    assert version
    text = (ROOT / "cmake" / "pip" / "ptxgenConfigVersion.cmake").read_text()
    assert f'set(PACKAGE_VERSION "{".".join(version.groups())}")' in text
    major, minor, _ = version.groups()
    assert f"PACKAGE_FIND_VERSION_MAJOR EQUAL {major} AND PACKAGE_FIND_VERSION_MINOR EQUAL " \
           f"{minor}" in text


def test_the_oldest_constraints_are_the_declared_lower_bounds() -> None:
    """.ci/oldest installs .ci/constraints-oldest.txt: the releases pyproject.toml names as
    the oldest it supports."""
    import re

    pyproject = (ROOT / "pyproject.toml").read_text()
    block = pyproject[pyproject.index("dependencies = ["):]
    declared = dict(re.findall(r'"([a-z0-9]+)>=([0-9.]+)"', block[:block.index("]")]))
    pinned = dict(re.findall(r"^([a-z0-9]+)==([0-9.]+)$",
                             (ROOT / ".ci" / "constraints-oldest.txt").read_text(), flags=re.M))
    assert declared == pinned and set(declared) == {"pyyaml", "jinja2", "jsonschema"}


def test_ci_runs_the_readmes_two_commands_in_a_bare_environment() -> None:
    """.ci/run makes a venv without system site packages and runs exactly the README's
    developer commands (what a new user gets: the newest releases)."""
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("For developers"):]
    block = block[block.index("```sh\n") + 6:]
    commands = block[:block.index("```")].splitlines()
    assert commands == ['python3 -m pip install -e ".[test]"', "python3 -m pytest"]
    run = (ROOT / ".ci" / "run").read_text().splitlines()
    assert run[-2:] == commands
    assert 'python3 -m venv "$venv"' in run and 'source "$venv/bin/activate"' in run
    assert not [line for line in run if "system-site-packages" in line]


def test_a_missing_template_is_not_blamed_on_out(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    """An installation without its templates (the wheel before issue 28) said
    ``--out X: cannot write: 'cpp/descriptor.hpp.j2' not found``; now it names the
    templates folder and the installation."""
    import jinja2

    from ptxgen import cli
    from ptxgen.emit import templates

    empty = tmp_path / "no-templates"
    empty.mkdir()
    monkeypatch.setenv("PTXGEN_JOBS", "1")  # render in this process
    monkeypatch.setattr(templates, "environment",
                        lambda *_: jinja2.Environment(loader=jinja2.FileSystemLoader(empty)))
    monkeypatch.setattr(templates, "TEMPLATES_DIR", empty)
    assert cli.main(["generate", "--spec", str(ROOT / "spec"), "--out",
                     str(tmp_path / "X")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("ptxgen: error: template '"), err
    assert err[0].endswith(f"' is not in {empty}: this installation of ptxgen is incomplete; "
                           "nothing written"), err
    assert not (tmp_path / "X").exists()
