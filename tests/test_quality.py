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


def test_mypy_strict_on_the_package_and_the_generated_bindings(tmp_path: Path) -> None:
    root = _package_tree(tmp_path)
    res = subprocess.run([*_tool("mypy"), "--strict", "--no-incremental", "-p", "ptxgen"],
                         cwd=root, capture_output=True, text=True, check=False,
                         env={**os.environ, "MYPYPATH": str(root)})
    assert res.returncode == 0, res.stdout + res.stderr


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
