"""Device code computes what host code computes: tests/cpp/gpu_crosscheck.cu runs the run-time
API of the generated headers on the GPU and compares each result with the host's. Needs an
NVIDIA GPU (marker "gpu"): skipped where there is none, as in CI; run through the device
tool with `python -m pytest -m gpu tests/test_cpp_gpu.py`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cpp import harness
from cpp.harness import INCLUDE

pytestmark = pytest.mark.gpu


def gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    return subprocess.run([smi, "-L"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not gpu_present(), reason="no NVIDIA GPU on this machine")
def test_device_matches_host(tmp_path: Path) -> None:
    nvcc = harness.tool("nvcc")
    exe = tmp_path / "gpu_crosscheck"
    harness.run([nvcc, "-std=c++17", "-O2", "-arch=native", f"-I{INCLUDE}", "-Werror",
                 "all-warnings", str(harness.HERE / "gpu_crosscheck.cu"), "-o", str(exe)])
    out = harness.run([str(exe), str(1 << 20)], timeout=300).stdout
    assert "mismatches=0" in out, out
