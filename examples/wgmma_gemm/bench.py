"""Build, check and time the wgmma bf16 GEMM (gemm.cu) against torch.matmul (cuBLAS).

    python3 examples/wgmma_gemm/bench.py [--size 8192] [--variants] [--json out.json]

C = A @ B^T with A [M, K] and B [N, K] bf16 (torch.matmul(A, B.t()), the same operands for
both). Problems: M = N = K = --size (the reported one), then --extra (default 4096^3 and
8192 x 8192 x 2048: fewer waves of tiles, where the last one's idle share weighs more).

Kernel configurations (CONFIGS), all checked and timed in the same interleaved rounds as
cuBLAS: the default (ptxgen_gemm_bf16: clusters of 2 sharing B by TMA multicast, the
stream-K tail and C written by TMA stores) and the others for comparison, "cluster1" being
the previous kernel's algorithm (one CTA per tile, every tile whole, direct stores).

Correctness, in the same run as the timing: every element is written (C is poisoned with
NaN first), rows sampled at random agree with a float64 reference to a relative Frobenius
error under 1e-2 (bf16 output: about 2e-3 expected; the cuBLAS result is held to the same
check), and every configuration's C equals the "cluster1" one's bit for bit (the same
wgmma instructions in the same k order for every element); the share of elements equal to
cuBLAS's is recorded. Timing: CUDA events around each call after warm-up, interleaved
rounds of every configuration and torch's, the median; TFLOP/s = 2 M N K / time.
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
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INCLUDE = ROOT / "generated" / "include"
FLAGS = ["-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC",
         "-shared", "-Xptxas", "-v"]

#: (stages, group_m) of the variants of the default configuration timed after the main
#: measurement; the first is the default.
VARIANTS = [(4, 16), (3, 16), (4, 8), (4, 32)]

#: name: (cluster, streamk, tma_store) passed to ptxgen_gemm_bf16_config; the first is the
#: default (what ptxgen_gemm_bf16 runs), "cluster1" the reference for the bit-identity check.
CONFIGS = {"cluster2+streamk+tma_store": (2, 1, 1), "cluster2+tma_store": (2, 0, 1),
           "cluster2+streamk": (2, 1, 0), "cluster2": (2, 0, 0),
           "cluster1+streamk+tma_store": (1, 1, 1), "cluster1+tma_store": (1, 0, 1),
           "cluster1": (1, 0, 0)}
REFERENCE = "cluster1"

#: (M, N, K) timed after the main --size problem.
EXTRA = [(4096, 4096, 4096), (8192, 8192, 2048)]


def build(defines: tuple[str, ...] = (), name: str = "gemm") -> tuple[Path, str]:
    """Compile gemm.cu (with -D defines: examples/fp8_gemm builds it with PTXGEN_GEMM_E4M3)
    into PTXGEN_GPU_BUILD/name-HASH/libgemm.so, unless already there; the library and the
    build log (ptxas -v)."""
    src = HERE / "gemm.cu"
    flags = [*FLAGS, *(f"-D{d}" for d in defines)]
    h = hashlib.sha256(src.read_bytes() + " ".join(flags).encode())
    for p in [*sorted((INCLUDE / "ptxgen").rglob("*.hpp")),
              *sorted((ROOT / "examples" / "common").glob("*.cuh"))]:
        h.update(p.read_bytes())
    out = Path(os.environ.get("PTXGEN_GPU_BUILD", Path(tempfile.gettempdir()) / "ptxgen-gpu-build"))
    out = out / f"{name}-{h.hexdigest()[:16]}"
    lib = out / "libgemm.so"
    log = out / "build.log"
    if not lib.exists():
        out.mkdir(parents=True, exist_ok=True)
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        cmd = [nvcc, *flags, f"-I{INCLUDE}", str(src), "-o", str(lib)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        log.write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
        if proc.returncode != 0:
            sys.exit(f"nvcc failed:\n{proc.stdout}{proc.stderr}")
    return lib, log.read_text() if log.exists() else ""


def load(lib_path: Path) -> Any:
    lib = ctypes.CDLL(str(lib_path))
    lib.ptxgen_gemm_bf16.restype = ctypes.c_int
    lib.ptxgen_gemm_bf16.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6
    lib.ptxgen_gemm_bf16_config.restype = ctypes.c_int
    lib.ptxgen_gemm_bf16_config.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 9
    lib.ptxgen_gemm_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gemm_error_string.argtypes = [ctypes.c_int]
    return lib


def time_calls(torch: Any, fn: Any, iters: int) -> list[float]:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def interleaved(torch: Any, fns: dict[str, Any],
                args: argparse.Namespace) -> dict[str, list[float]]:
    """args.warmup calls of each, then args.rounds rounds of args.iters timed calls of each in
    turn: every call's time (ms), by name."""
    for _ in range(args.warmup):
        for fn in fns.values():
            fn()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.rounds):
        for name, fn in fns.items():
            times[name] += time_calls(torch, fn, args.iters)
    return times


def problem(torch: Any, lib: Any, m: int, n: int, k: int, args: argparse.Namespace,
            gen: Any) -> dict[str, Any]:
    """Check every configuration on one problem, then time them and cuBLAS in interleaved
    rounds."""
    dev = torch.device("cuda")
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=gen)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
    stages, group_m = VARIANTS[0]

    def call(cluster: int, streamk: int, tma_store: int, st: int = stages,
             gm: int = group_m) -> None:
        err = lib.ptxgen_gemm_bf16_config(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k,
                                          st, gm, 0, cluster, streamk, tma_store)
        if err != 0:
            msg = lib.ptxgen_gemm_error_string(err).decode() if err < 1000 else "see gemm.cu"
            raise RuntimeError(f"ptxgen_gemm_bf16_config returned {err}: {msg}")

    def theirs() -> Any:
        return torch.matmul(a, b.t())

    rows = torch.randperm(m, device=dev, generator=gen)[: args.sample_rows]
    ref = a[rows].double() @ b.double().t()
    cublas = theirs()
    torch.cuda.synchronize()

    def rel(x: Any) -> float:
        return float(torch.linalg.norm(x.double() - ref) / torch.linalg.norm(ref))

    outs: dict[str, Any] = {}
    configs: dict[str, dict[str, Any]] = {}
    for name, (cluster, streamk, tma_store) in CONFIGS.items():
        c.fill_(float("nan"))
        call(cluster, streamk, tma_store)
        torch.cuda.synchronize()
        outs[name] = c.clone()
        unwritten = int(torch.isnan(c).sum().item())
        configs[name] = {"cluster": cluster, "streamk": bool(streamk),
                         "tma_store": bool(tma_store), "unwritten": unwritten,
                         "rel_err": rel(c[rows]),
                         "identical_to_cublas": float((c == cublas).double().mean().item())}
    for name, cfg in configs.items():
        cfg["identical_to_reference"] = bool(torch.equal(outs[name], outs[REFERENCE]))
        cfg["correct"] = (cfg["unwritten"] == 0 and cfg["rel_err"] < 1e-2
                          and cfg["identical_to_reference"])
    default = next(iter(CONFIGS))
    rel_vs_cublas = float(torch.linalg.norm(outs[default].double() - cublas.double())
                          / torch.linalg.norm(cublas.double()))
    rel_cublas = rel(cublas[rows])
    del outs

    flop = 2.0 * m * n * k
    fns: dict[str, Any] = {name: (lambda cfg=cfg: call(*cfg)) for name, cfg in CONFIGS.items()}
    fns["torch"] = theirs
    times = interleaved(torch, fns, args)
    ms = {name: statistics.median(t) for name, t in times.items()}
    for name, cfg in configs.items():
        cfg.update(ms=ms[name], tflops=flop / ms[name] / 1e9, ratio=ms["torch"] / ms[name],
                   spread_ms=[min(times[name]), max(times[name])])
    variants = []
    if args.variants:
        cl, sk, tma = CONFIGS[default]
        for st, gm in VARIANTS:
            fn = lambda st=st, gm=gm: call(cl, sk, tma, st, gm)  # noqa: E731
            for _ in range(3):
                fn()
            ts = time_calls(torch, fn, args.iters * 2)
            variants.append({"stages": st, "group_m": gm, "cluster": cl, "streamk": bool(sk),
                             "tma_store": bool(tma),
                             "ms": statistics.median(ts),
                             "tflops": flop / statistics.median(ts) / 1e9})
    # the default configuration must still be correct after the others ran
    c.fill_(float("nan"))
    call(*CONFIGS[default])
    torch.cuda.synchronize()
    still = bool(torch.equal(c, cublas) or (not torch.isnan(c).any().item()
                                            and rel(c[rows]) < 1e-2))
    chosen = configs[default]
    return {
        "size": [m, n, k],
        "correct": chosen["correct"] and still and rel_cublas < 1e-2,
        "unwritten": chosen["unwritten"],
        "rel_err_ours": chosen["rel_err"],
        "rel_err_cublas": rel_cublas,
        "rel_diff_ours_vs_cublas": rel_vs_cublas,
        "identical_to_cublas": chosen["identical_to_cublas"],
        "identical_to_reference": chosen["identical_to_reference"],
        "sample_rows": int(rows.numel()),
        "reported": default,
        "ms_ours": chosen["ms"],
        "ms_torch": ms["torch"],
        "tflops_ours": chosen["tflops"],
        "tflops_torch": flop / ms["torch"] / 1e9,
        "ratio": chosen["ratio"],
        "configs": configs,
        "timing": {"warmup": args.warmup, "iters": args.iters, "rounds": args.rounds,
                   "spread_ours_ms": chosen["spread_ms"],
                   "spread_torch_ms": [min(times["torch"]), max(times["torch"])]},
        "variants": variants,
    }


def parse_mnk(text: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=8192, help="M = N = K of the reported problem")
    ap.add_argument("--extra", nargs="*", type=parse_mnk,
                    default=EXTRA, help="further problems MxNxK (default 4096x4096x4096 "
                    "8192x8192x2048; none with an empty list)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20, help="timed calls per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sample-rows", type=int, default=256)
    ap.add_argument("--variants", action="store_true",
                    help="also time the (stages, group_m) variants on the main problem")
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
    lib = load(lib_path)
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))

    problems = []
    for i, (m, n, k) in enumerate([(args.size,) * 3, *args.extra]):
        ns = argparse.Namespace(**vars(args))
        ns.variants = args.variants and i == 0
        problems.append(problem(torch, lib, m, n, k, ns, gen))
        torch.cuda.empty_cache()
    main_res = problems[0]
    regs = [line.strip() for line in build_log.splitlines()
            if "registers" in line or "spill" in line]
    res = {
        **main_res,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "correct": all(p["correct"] for p in problems),
        "config": {"tile": "128x256x64", "stages": VARIANTS[0][0], "group_m": VARIANTS[0][1],
                   "consumers": 2, "persistent": True, "cluster": CONFIGS[main_res["reported"]][0],
                   "streamk": bool(CONFIGS[main_res["reported"]][1]),
                   "tma_store": bool(CONFIGS[main_res["reported"]][2])},
        "problems": [{k: v for k, v in p.items() if k != "variants"} for p in problems],
        "ptxas": regs,
    }
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    print(json.dumps({k: v for k, v in res.items() if k not in ("ptxas", "problems")}, indent=2))
    for p in problems:
        mnk = "x".join(str(x) for x in p["size"])
        print(f"{mnk:>16}: torch {p['tflops_torch']:7.1f} TFLOP/s  "
              f"(rel err {p['rel_err_cublas']:.2e})   correct={p['correct']}")
        for name, cfg in p["configs"].items():
            print(f"{'':>16}  {name:<18} {cfg['tflops']:7.1f} TFLOP/s  ratio {cfg['ratio']:.3f}  "
                  f"rel err {cfg['rel_err']:.2e}  identical to {REFERENCE}: "
                  f"{cfg['identical_to_reference']}  to cuBLAS: "
                  f"{100 * cfg['identical_to_cublas']:.2f}%")
    print(f"ratio {res['ratio']:.3f}   correct={res['correct']}")
    return 0 if res["correct"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
