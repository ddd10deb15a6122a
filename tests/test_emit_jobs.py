"""Rendering on several processes (ptxgen.emit.jobs): the same files, byte for byte, as one
process renders; a worker that fails leaves its jobs to the parent, which raises the
job's own error."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ptxgen import pipeline
from ptxgen.emit import jobs, render_all

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="forked workers are used on Linux only")


@needs_fork
def test_every_process_count_renders_the_same_bytes() -> None:
    spec = pipeline.load_model(SPEC)
    one = render_all(spec, processes=1)
    for n in (2, 3):
        assert render_all(spec, processes=n) == one
    # the committed output is what one process renders (the manifest aside)
    for path, data in one.items():
        assert (ROOT / "generated" / path).read_bytes() == data, path


@needs_fork
def test_the_jobs_run_in_more_than_one_process() -> None:
    def job(i: int) -> jobs.Files:
        import time
        time.sleep(0.05)  # long enough for the other process to take a job
        return {f"{i}": str(os.getpid()).encode()}

    out = jobs.run([lambda i=i: job(i) for i in range(8)], processes=2)
    assert [list(f) for f in out] == [[str(i)] for i in range(8)]  # in the jobs' order
    assert len({f[str(i)] for i, f in enumerate(out)}) == 2


@needs_fork
def test_a_failing_job_raises_its_own_error_in_the_parent() -> None:
    parent = os.getpid()

    def job(i: int) -> jobs.Files:
        if i == 5:
            where = "the parent" if os.getpid() == parent else "a child"
            raise ValueError(f"job {i} failed in {where}")
        return {f"{i}": b"x"}

    with pytest.raises(ValueError, match="job 5 failed in the parent"):
        jobs.run([lambda i=i: job(i) for i in range(8)], processes=2)


def test_the_process_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXGEN_JOBS", "1")
    assert jobs.workers() == 1
    assert jobs.workers(3) == 3
    monkeypatch.setenv("PTXGEN_JOBS", "nonsense")
    assert jobs.workers() == len(os.sched_getaffinity(0))
