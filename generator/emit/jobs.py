"""Rendering on every CPU: the emitters' work as independent jobs, run by forked workers.

Rendering is pure (a job reads the model and returns bytes), so its jobs can run in any
order and in any process. :func:`run` hands them out through a work queue (a pipe holding
each job's number, read two bytes at a time: a pipe read that size is atomic, so every
job is taken by exactly one process) to the parent and ``workers - 1`` forked children,
biggest first as given. A child sends its files back through a pipe (:mod:`marshal`:
plain data, no code runs when loading them) and exits. The result is the same mapping,
byte for byte, as running the jobs one after another: only which process renders a file
differs.

Forked workers are used on Linux only (where ``fork`` is the default start method and
cheap); elsewhere, with one CPU, for one job, or with ``PTXGEN_JOBS=1``, the jobs run in
this process. A child that fails (an exception, a signal) leaves its jobs to the parent,
which runs them again in this process, so an error is raised exactly as without workers.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys
from collections.abc import Callable, Sequence

from ptxgen.emit.templates import Files

Job = Callable[[], Files]

#: Jobs numbered in two bytes (the queue's unit).
MAX_JOBS = 1 << 16


def workers(requested: int | None = None) -> int:
    """The number of processes to render with: ``requested``, else ``PTXGEN_JOBS`` (a
    positive number), else the CPUs this process may run on."""
    if requested is None:
        env = os.environ.get("PTXGEN_JOBS", "")
        requested = int(env) if env.isdigit() and int(env) > 0 else None
    if requested is None:
        try:
            requested = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            requested = os.cpu_count() or 1
    return max(1, requested)


def run(jobs: Sequence[Job], processes: int | None = None) -> list[Files]:
    """Each job's files, in the order of ``jobs``."""
    n = min(workers(processes), len(jobs))
    if n <= 1 or not sys.platform.startswith("linux") or len(jobs) >= MAX_JOBS:
        return [job() for job in jobs]
    queue_r, queue_w = os.pipe()
    os.write(queue_w, b"".join(i.to_bytes(2, "little") for i in range(len(jobs))))
    os.close(queue_w)  # an empty queue then reads as end of file
    children: list[tuple[int, int]] = []  # (pid, the read end of its result pipe)
    results: dict[int, Files] = {}
    try:
        for _ in range(n - 1):
            result_r, result_w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the child: take jobs until the queue is empty, send the files
                os.close(result_r)
                _child(jobs, queue_r, result_w)
            os.close(result_w)
            children.append((pid, result_r))
        results.update(_take(jobs, queue_r))
    except BaseException:
        for pid, _ in children:  # this process failed: its workers' files are not needed
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(queue_r)
        for pid, result_r in children:
            with os.fdopen(result_r, "rb") as pipe:
                data = pipe.read()
            _, status = os.waitpid(pid, 0)
            if status == 0 and data:
                results.update(marshal.loads(data))
    # a job that a failed child took: run here (raising as it would have without workers)
    return [results[i] if i in results else jobs[i]() for i in range(len(jobs))]


def _take(jobs: Sequence[Job], queue: int) -> list[tuple[int, Files]]:
    done = []
    while len(unit := os.read(queue, 2)) == 2:
        i = int.from_bytes(unit, "little")
        done.append((i, jobs[i]()))
    return done


def _child(jobs: Sequence[Job], queue: int, out: int) -> None:
    code = 1
    try:
        data = marshal.dumps(dict(_take(jobs, queue)))
        with os.fdopen(out, "wb") as pipe:
            pipe.write(data)
        code = 0
    except BaseException:  # the parent runs this child's jobs again
        pass
    finally:
        os._exit(code)
