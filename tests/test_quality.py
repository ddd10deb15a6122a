"""The consumers of generated Python check it: Python's parser (by import),
mypy --strict and ruff. The generator package itself is held to the same bar."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def _package_tree(dst: Path) -> Path:
    """ptxgen laid out as installed: generator/ as ptxgen, generated/python as ptxgen.isa."""
    pkg = dst / "ptxgen"
    shutil.copytree(ROOT / "generator", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "generated" / "python", pkg / "isa",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _tool(name: str) -> list[str]:
    exe = shutil.which(name)
    if exe is None:
        pytest.fail(f"{name} is a test dependency: pip install -e '.[test]'")
    return [exe]


_WRONG = '''\
from ptxgen.isa import InstrDescF16, SmemDesc

InstrDescF16(dtype="f32", atype="bf16", btype="bf16", n=256, m=128, negat_a=1)  # line 3
InstrDescF16(dtype="f33", atype="bf16", btype="bf16", n=256, m=128)  # line 4
SmemDesc(start_address=0x280, swizzle="64B")  # line 5
InstrDescF16(dtype="f32", atype="bf16", btype="bf16", n=256, m=128, k_dim=1)  # line 6
'''


def test_mypy_strict_on_the_package_the_generated_bindings_and_the_readme(
        tmp_path: Path) -> None:
    """One mypy --strict run (its analysis of ptxgen is most of its time): the package and
    the generated bindings pass; the README's own Python block passes against the package
    as installed; a misspelt keyword or value name, and a field of a newer layout, are
    mypy errors (_WRONG)."""
    import re

    root = _package_tree(tmp_path)
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Python\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "InstrDescF16(dtype=\"f32\"" in block
    (root / "readme_example.py").write_text(block)
    (root / "wrong.py").write_text(_WRONG)
    res = subprocess.run([*_tool("mypy"), "--strict", "--no-incremental", "-p", "ptxgen",
                          "-m", "readme_example", "-m", "wrong"],
                         cwd=root, capture_output=True, text=True, check=False,
                         env={**os.environ, "MYPYPATH": str(root)})
    errors = re.findall(r"^(\S+\.py):(\d+): error", res.stdout, re.M)
    assert errors, res.stdout + res.stderr
    assert {f for f, _ in errors} == {"wrong.py"}, res.stdout + res.stderr
    assert {int(line) for _, line in errors} == {3, 4, 5, 6}, res.stdout
    assert 'Unexpected keyword argument "negat_a"' in res.stdout


def test_ruff_on_everything_python() -> None:
    paths = ["generator", "tests", "benchmarks", "generated/python", "generated/tests"]
    res = subprocess.run([*_tool("ruff"), "check", "--output-format", "concise", *paths],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_schema_files_are_valid_json_schema() -> None:
    import jsonschema

    for path in sorted((ROOT / "spec" / "schema").glob("*.json")):
        schema = json.loads(path.read_text())
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_generated_package_imports_in_a_clean_interpreter() -> None:
    res = subprocess.run([sys.executable, "-c", "import ptxgen.isa as m; print(len(m.__all__))"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) >= 10
