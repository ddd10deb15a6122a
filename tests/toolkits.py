"""The two CUDA toolkits the tests use as oracles.

* CUDA 13.0: ``nvcc`` / ``ptxas`` on the PATH (the machine's toolkit);
* CUDA 13.5: ``nvcc`` / ``ptxas`` from the test dependencies ``nvidia-cuda-nvcc``,
  ``nvidia-nvvm``, ``nvidia-cuda-crt`` and ``nvidia-cuda-runtime`` == 13.5.37,
  found through the installed ``nvidia-cuda-nvcc`` distribution
  (``site-packages/nvidia/cu13/bin``); ``PTXGEN_CUDA_13_5_BIN`` names another
  folder with both.

``require(tool, release)`` returns the path, checks that ``--version`` names the
release, and fails in CI (CI=true) / skips elsewhere when the tool is missing.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

RELEASES = ("13.0", "13.5")


@functools.cache
def find(tool: str, release: str) -> str | None:
    """The path of ``tool`` (nvcc or ptxas) of CUDA ``release``, or None."""
    if release == "13.0":
        path = shutil.which(tool)
    else:
        path = None
        folder = os.environ.get(f"PTXGEN_CUDA_{release.replace('.', '_')}_BIN")
        if folder:
            path = str(Path(folder) / tool)
        else:
            try:
                from importlib.metadata import PackageNotFoundError, distribution

                dist = distribution("nvidia-cuda-nvcc")
                path = str(dist.locate_file(f"nvidia/cu13/bin/{tool}"))
            except PackageNotFoundError:
                return None
    if path is None or not os.access(path, os.X_OK):
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    return path if f"release {release}," in out.stdout else None


@functools.cache
def find_nvdisasm() -> str | None:
    """nvdisasm 13.5 from the test dependency ``nvidia-cuda-nvdisasm`` (this machine's CUDA
    13.0 has no cuobjdump / nvdisasm); ``PTXGEN_NVDISASM`` names another binary."""
    path = os.environ.get("PTXGEN_NVDISASM")
    if not path:
        try:
            from importlib.metadata import PackageNotFoundError, distribution

            path = str(distribution("nvidia-cuda-nvdisasm").locate_file(
                "nvidia/cu13/bin/nvdisasm"))
        except PackageNotFoundError:
            return None
    if not os.access(path, os.X_OK):
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    return path if "release 13.5," in out.stdout else None


def require_nvdisasm() -> str:
    path = find_nvdisasm()
    if path is None:
        msg = ("nvdisasm 13.5 is required (from the test dependency "
               "nvidia-cuda-nvdisasm==13.5.37: pip install -e '.[test]')")
        if os.environ.get("CI"):
            pytest.fail(msg + " in CI")
        pytest.skip(msg)
    return path


def require(tool: str, release: str) -> str:
    path = find(tool, release)
    if path is None:
        where = "on the PATH" if release == "13.0" else (
            "from the test dependency nvidia-cuda-nvcc==13.5.37 (pip install -e '.[test]')")
        msg = f"{tool} of CUDA {release} is required ({where})"
        if os.environ.get("CI"):
            pytest.fail(msg + " in CI")
        pytest.skip(msg)
    return path


def all_ptxas() -> list[str]:
    """ptxas of every release the tests use (required in CI, as :func:`require`)."""
    return [require("ptxas", release) for release in RELEASES]


def assemble_file(ptxas: str, ptx: Path, target: str) -> tuple[int, str]:
    """Assemble a whole PTX file for ``target`` (beside it, ``.cubin``): ptxas's exit
    status and messages."""
    proc = subprocess.run([ptxas, f"-arch={target}", str(ptx), "-o", str(ptx.with_suffix(
        ".cubin"))], capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def assemble(ptxas: str, workdir: Path, body: str, target: str, version: str,
             decls: str = ".reg .b32 r<4>;\n.reg .b64 rd<4>;\n.reg .pred p<3>;\n"
             ) -> tuple[int, str]:
    """Assemble one kernel holding ``body`` (with code generation for ``target``): ptxas's
    exit status and messages."""
    src = workdir / "k.ptx"
    src.write_text(f".version {version}\n.target {target}\n.address_size 64\n"
                   f".visible .entry k() {{\n{decls}{body}\nret;\n}}\n")
    proc = subprocess.run([ptxas, f"-arch={target}", str(src), "-o", str(workdir / "k.cubin")],
                          capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr

