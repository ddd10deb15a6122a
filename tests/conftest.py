"""Shared fixtures: the repository paths and a runner for the installed CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"


class Result:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr


def run_cli(*args: str, cwd: Path = ROOT, timeout: float | None = None) -> Result:
    """Run ``python -m ptxgen`` as a user would (a separate process); ``timeout`` turns a
    hang into a failure (subprocess.TimeoutExpired)."""
    proc = subprocess.run([sys.executable, "-m", "ptxgen", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=timeout)
    return Result(proc)


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """A private copy of spec/ that a test may break."""
    dst = tmp_path / "spec"
    shutil.copytree(SPEC, dst)
    return dst
