"""Build and check the tcgen05 bf16 GEMM (gemm.cu) on a Blackwell GPU (B200: sm_100a).

    python3 examples/tcgen05_gemm/check.py [--arch sm_100a] [--sizes 128,256,1024,4096]

C = A @ B^T with A [M, K] and B [N, K] bf16 (torch.matmul(A, B.t())). For each size
(M = N = K) and each stage count (2, 4): C is poisoned with NaN, the kernel must write
every element, and C must agree with a float64 reference to a relative Frobenius error
under 1e-2 (bf16 output: about 2e-3 expected). Exit status 0 when every check passes.
The kernel has not been run by this project (no Blackwell GPU): this script is how to run
it; the CI only proves that it compiles for every tcgen05 target and holds the expected
SASS (tests/test_tcgen05_gemm_build.py).
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parents[1] / "generated" / "include"


def build(arch: str) -> Path:
    out = Path(tempfile.mkdtemp(prefix="tcgen05-gemm-")) / "libtcgen05_gemm.so"
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    cmd = [nvcc, "-std=c++17", "-O3", f"-arch={arch}", "-Xcompiler", "-fPIC", "-shared",
           f"-I{INCLUDE}", str(HERE / "gemm.cu"), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"nvcc failed:\n{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return out


def main() -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--arch", default="sm_100a")
    ap.add_argument("--sizes", default="128,256,1024,4096")
    args = ap.parse_args()
    lib = ctypes.CDLL(str(build(args.arch)))
    lib.ptxgen_tcgen05_gemm_bf16.restype = ctypes.c_int
    lib.ptxgen_tcgen05_gemm_bf16.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3 + [
        ctypes.c_float, ctypes.c_int]
    lib.ptxgen_tcgen05_gemm_error_string.restype = ctypes.c_char_p
    failures = 0
    torch.manual_seed(0)
    for size in (int(s) for s in args.sizes.split(",")):
        a = torch.randn(size, size, device="cuda").to(torch.bfloat16)
        b = torch.randn(size, size, device="cuda").to(torch.bfloat16)
        ref = a.double() @ b.double().t()
        for stages in (2, 4):
            c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.bfloat16)
            err = lib.ptxgen_tcgen05_gemm_bf16(a.data_ptr(), b.data_ptr(), c.data_ptr(), size,
                                               size, size, 1.0, stages)
            torch.cuda.synchronize()
            if err:
                print(f"size {size} stages {stages}: error {err} "
                      f"({lib.ptxgen_tcgen05_gemm_error_string(err).decode()})")
                failures += 1
                continue
            written = bool(torch.isfinite(c).all())
            rel = float((c.double() - ref).norm() / ref.norm())
            ok = written and rel < 1e-2
            failures += not ok
            print(f"size {size} stages {stages}: every element written {written}, "
                  f"relative error {rel:.2e} {'ok' if ok else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
