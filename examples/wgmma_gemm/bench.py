"""Build, check and time the wgmma bf16 GEMM (gemm.cu) against torch.matmul (cuBLAS).

    python3 examples/wgmma_gemm/bench.py [--size 8192] [--json out.json]

C = A @ B^T with A [M, K] and B [N, K] bf16 (torch.matmul(A, B.t()), the same operands for
both). Correctness, in the same run as the timing: every element is written (C is poisoned
with NaN first) and rows sampled at random agree with a float64 reference to a relative
Frobenius error under 1e-2 (bf16 output: about 2e-3 expected); the cuBLAS result is held to
the same check. Timing: CUDA events around each call after warm-up, interleaved rounds of
ours and torch's, the median; TFLOP/s = 2 M N K / time.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INCLUDE = ROOT / "generated" / "include"
FLAGS = ["-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC",
         "-shared", "-Xptxas", "-v"]

#: (stages, group_m) of the variants timed; the first is the reported default.
VARIANTS = [(4, 16), (3, 16), (4, 8), (4, 32)]


def build() -> tuple[Path, str]:
    src = HERE / "gemm.cu"
    h = hashlib.sha256(src.read_bytes() + " ".join(FLAGS).encode())
    for p in sorted((INCLUDE / "ptxgen").rglob("*.hpp")):
        h.update(p.read_bytes())
    out = Path(os.environ.get("PTXGEN_GPU_BUILD", Path(tempfile.gettempdir()) / "ptxgen-gpu-build"))
    out = out / f"gemm-{h.hexdigest()[:16]}"
    lib = out / "libgemm.so"
    log = out / "build.log"
    if not lib.exists():
        out.mkdir(parents=True, exist_ok=True)
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        cmd = [nvcc, *FLAGS, f"-I{INCLUDE}", str(src), "-o", str(lib)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        log.write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
        if proc.returncode != 0:
            sys.exit(f"nvcc failed:\n{proc.stdout}{proc.stderr}")
    return lib, log.read_text() if log.exists() else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=8192, help="M = N = K")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20, help="timed calls per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sample-rows", type=int, default=256)
    ap.add_argument("--variants", action="store_true", help="also time the other variants")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--build-only", action="store_true", help="compile gemm.cu and stop")
    args = ap.parse_args()
    if args.build_only:
        lib_path, build_log = build()
        print(lib_path)
        print(build_log)
        return 0

    import torch

    lib_path, build_log = build()
    lib = ctypes.CDLL(str(lib_path))
    lib.ptxgen_gemm_bf16.restype = ctypes.c_int
    lib.ptxgen_gemm_bf16.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6
    lib.ptxgen_gemm_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gemm_error_string.argtypes = [ctypes.c_int]

    m = n = k = args.size
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)

    def ours(stages: int = VARIANTS[0][0], group_m: int = VARIANTS[0][1]) -> None:
        err = lib.ptxgen_gemm_bf16(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, stages,
                                   group_m, 0)
        if err != 0:
            msg = lib.ptxgen_gemm_error_string(err).decode() if err < 1000 else "see gemm.cu"
            raise RuntimeError(f"ptxgen_gemm_bf16 returned {err}: {msg}")

    def theirs() -> torch.Tensor:
        return torch.matmul(a, b.t())

    # -- correctness (same inputs as the timing) --
    ours()
    torch.cuda.synchronize()
    unwritten = int(torch.isnan(c).sum().item())
    rows = torch.randperm(m, device=dev, generator=gen)[: args.sample_rows]
    ref = a[rows].double() @ b.double().t()
    cublas = theirs()
    torch.cuda.synchronize()

    def rel(x: torch.Tensor) -> float:
        return float(torch.linalg.norm(x.double() - ref) / torch.linalg.norm(ref))

    rel_ours, rel_cublas = rel(c[rows]), rel(cublas[rows])
    rel_vs_cublas = float(torch.linalg.norm(c.double() - cublas.double())
                          / torch.linalg.norm(cublas.double()))
    correct = unwritten == 0 and rel_ours < 1e-2 and rel_cublas < 1e-2

    # -- timing --
    def time_calls(fn: object, iters: int) -> list[float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for i in range(iters):
            starts[i].record()
            fn()  # type: ignore[operator]
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]

    flop = 2.0 * m * n * k
    for _ in range(args.warmup):
        ours()
        theirs()
    torch.cuda.synchronize()
    t_ours: list[float] = []
    t_torch: list[float] = []
    for _ in range(args.rounds):
        t_ours += time_calls(ours, args.iters)
        t_torch += time_calls(theirs, args.iters)
    ms_ours, ms_torch = statistics.median(t_ours), statistics.median(t_torch)
    variants = []
    if args.variants:
        for st, gm in VARIANTS:
            fn = lambda st=st, gm=gm: ours(st, gm)  # noqa: E731
            for _ in range(3):
                fn()
            ts = time_calls(fn, args.iters * 2)
            variants.append({"stages": st, "group_m": gm, "ms": statistics.median(ts),
                             "tflops": flop / statistics.median(ts) / 1e9})
        # the default variant must still be correct after the others ran
        ours()
        torch.cuda.synchronize()

    regs = [line.strip() for line in build_log.splitlines()
            if "registers" in line or "spill" in line]
    res = {
        "size": [m, n, k],
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "correct": correct,
        "unwritten": unwritten,
        "rel_err_ours": rel_ours,
        "rel_err_cublas": rel_cublas,
        "rel_diff_ours_vs_cublas": rel_vs_cublas,
        "sample_rows": int(rows.numel()),
        "ms_ours": ms_ours,
        "ms_torch": ms_torch,
        "tflops_ours": flop / ms_ours / 1e9,
        "tflops_torch": flop / ms_torch / 1e9,
        "ratio": ms_torch / ms_ours,
        "config": {"tile": "128x256x64", "stages": VARIANTS[0][0], "group_m": VARIANTS[0][1],
                   "consumers": 2, "persistent": True},
        "timing": {"warmup": args.warmup, "iters": args.iters, "rounds": args.rounds,
                   "spread_ours_ms": [min(t_ours), max(t_ours)],
                   "spread_torch_ms": [min(t_torch), max(t_torch)]},
        "variants": variants,
        "ptxas": regs,
    }
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    print(json.dumps({k: v for k, v in res.items() if k not in ("ptxas",)}, indent=2))
    print(f"ours  {res['tflops_ours']:7.1f} TFLOP/s  ({ms_ours:.3f} ms)   rel err {rel_ours:.2e}")
    print(f"torch {res['tflops_torch']:7.1f} TFLOP/s  ({ms_torch:.3f} ms)   "
          f"rel err {rel_cublas:.2e}")
    print(f"ratio {res['ratio']:.3f}   correct={correct}")
    return 0 if correct else 1


if __name__ == "__main__":
    raise SystemExit(main())
