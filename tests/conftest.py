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


def _end_now(signum: int, frame: object) -> None:
    """The default action of ``signum``: end this process."""
    import os
    import signal

    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def run_main(*args: str, cwd: Path = ROOT) -> Result:
    """Run ``ptxgen.cli.main(args)`` in this process, in ``cwd``: the same parsing, output,
    messages and exit code as the program (``python -m ptxgen`` only adds the interpreter's
    start and exit), without a new interpreter, imports and spec load per call. The
    working folder and the signal handlers the CLI installs are put back. Keep
    :func:`run_cli` for claims about the process itself (signals, bytes of a pipe)."""
    import contextlib
    import io
    import os
    import signal

    from ptxgen.cli import main

    out, err = io.StringIO(), io.StringIO()
    sigs = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    saved = {s: signal.getsignal(s) for s in sigs}
    for s, handler in saved.items():
        # ptxgen turns SIGTERM into exit 143 where the action is the default: a test
        # process that is terminated (a cancelled CI job) must end, not fail one test
        if handler is signal.SIG_DFL:
            signal.signal(s, _end_now)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(old)
        for s, handler in saved.items():
            signal.signal(s, handler)
    return Result(subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue()))


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """A private copy of spec/ that a test may break."""
    dst = tmp_path / "spec"
    shutil.copytree(SPEC, dst)
    return dst


#: The instruction files that the descriptors name (``since: consumers``), and ldmatrix:
#: with the targets, the schemas and the descriptors they make a spec folder that
#: validates by itself (tests/test_instr_spec.py checks it), in a fifth of the time of
#: the whole spec's.
CORE_INSTRUCTIONS = ("ldmatrix.yaml", "spcompress.yaml", "tcgen05_mma.yaml", "tcgen05_tmem.yaml",
                     "wgmma.yaml")


@pytest.fixture
def spec_core(tmp_path: Path) -> Path:
    """A private copy of the core of spec/ (targets, schemas, descriptors and
    :data:`CORE_INSTRUCTIONS`) that a test may break: for a test about one of those files,
    whose every diagnostic it reports as the whole spec would."""
    return spec_subset(tmp_path / "spec", CORE_INSTRUCTIONS)


def spec_subset(dst: Path, instructions: tuple[str, ...], descriptors: bool = True) -> Path:
    """A copy of spec/ at ``dst`` with only these instruction files (and the descriptor
    files unless ``descriptors`` is False): targets and schemas whole."""
    def leave_out(folder: str, names: list[str]) -> list[str]:
        kind = Path(folder).name
        return [n for n in names if (kind == "instructions" and n not in instructions)
                or (kind == "descriptors" and not descriptors)]

    shutil.copytree(SPEC, dst, ignore=leave_out)
    return dst


# -- running on several workers (pytest-xdist, ``-n auto --dist loadfile`` in pyproject) ------
#
# Each test file runs on one worker, so its module fixtures (nvcc builds, ptxas runs) are
# made once. ``--dist loadfile``, not ``loadgroup``: pytest 9.2 keeps a node's id where
# pytest-xdist 3.8's loadgroup no longer writes the group (``item._nodeid``), so every
# test was scheduled on its own and a module's builds were made on both workers.

#: Files started first (longest first), so that no long file is left for the end.
_FIRST = ("test_instr_wrappers.py", "test_probe.py", "test_gpu_kernels_build.py",
          "test_ptxas_conformance.py", "test_lint.py")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files are moved to the front (xdist hands out files in this order)."""
    rank = {name: i for i, name in enumerate(_FIRST)}
    items.sort(key=lambda it: rank.get(it.path.name, len(rank)))

