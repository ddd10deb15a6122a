"""Small helpers shared by the GPU test modules (no heavy imports)."""

from __future__ import annotations

import os
import random
import zlib
from typing import Any

import pytest

#: Seed of this run's random operands: $PTXGEN_GPU_SEED, else a fresh one (printed in
#: pytest's header, so a failure can be replayed with the same inputs).
SEED = int(os.environ.get("PTXGEN_GPU_SEED", random.SystemRandom().randrange(1 << 31)))


def seed_for(name: str) -> int:
    return zlib.crc32(name.encode()) ^ SEED


def check_cuda(lib: Any, err: int) -> None:
    """Fail the test on a launcher's non-zero return (a cudaError_t, or -1)."""
    if err != 0:
        msg = lib.ptxgen_gpu_error_string(err).decode() if err > 0 else "no such case"
        pytest.fail(f"CUDA error {err}: {msg}")
