"""Build, check and time the 2:4-sparse bf16 GEMM (gemm_sp.cu) against the dense GEMM of the
same problem (torch.matmul on the decompressed A: cuBLAS) and, where the installed PyTorch has
it, torch's semi-structured sparse matmul (torch.sparse.to_sparse_semi_structured).
Every kernel configuration of CONFIGS is checked and timed (CTA clusters of 1, 2 or 4, the
larger sharing B tiles through TMA multicast; one or two stages per wgmma group); the
reported "ours" is the fastest of those that are correct in this run (all are listed).

    python3 examples/sparse_gemm/bench.py [--size 8192] [--variants] [--json out.json]

C = A @ B^T with A [M, K] 2:4-sparse along K (random positions and values), B [N, K], all
bf16. Ours takes A compressed (A_c [M, K/2]) plus its metadata E; cuBLAS the dense A.
Correctness, in the same run as the timing: every element of C written (poisoned with NaN
first), sampled rows against a float64 reference (relative Frobenius error < 1e-2), and all
of C against cuBLAS on the dense A (relative difference and the share of bit-identical
elements). Timing: CUDA events around each call after warm-up, interleaved rounds, median;
TFLOP/s counts the dense FLOPs, 2 M N K, for every contender.
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
SOURCES = [HERE / "gemm_sp.cu", ROOT / "examples" / "common" / "async_shim.cuh"]
FLAGS = ["-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC",
         "-shared", "-Xptxas", "-v"]

#: The kernel configurations (stages, group_m, cluster, group_stages) checked and timed with
#: the others; "+g2": two stages per wgmma group (ptxgen_gemm_sp_bf16_config).
CONFIGS = {"cluster2+g2": (5, 16, 2, 2), "cluster2": (5, 16, 2, 1), "cluster4+g2": (5, 16, 4, 2),
           "cluster1+g2": (5, 16, 1, 2), "cluster1": (5, 16, 1, 1)}

#: (stages, group_m) of the variants timed afterwards with the reported configuration's cluster.
VARIANTS = [(5, 16), (4, 16), (5, 8), (5, 32)]

#: The 4-bit metadata field of each pattern index (the positions i0 < i1 of the kept pair).
PAIRS = [(i0, i1) for i0 in range(4) for i1 in range(i0 + 1, 4)]


def build() -> tuple[Path, str]:
    h = hashlib.sha256(" ".join(FLAGS).encode())
    for p in SOURCES + sorted((INCLUDE / "ptxgen").rglob("*.hpp")):
        h.update(p.read_bytes())
    out = Path(os.environ.get("PTXGEN_GPU_BUILD", Path(tempfile.gettempdir()) / "ptxgen-gpu-build"))
    out = out / f"gemm_sp-{h.hexdigest()[:16]}"
    lib = out / "libgemm_sp.so"
    log = out / "build.log"
    if not lib.exists():
        out.mkdir(parents=True, exist_ok=True)
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        tmp = out / f"libgemm_sp.so.tmp{os.getpid()}"
        cmd = [nvcc, *FLAGS, f"-I{INCLUDE}", str(SOURCES[0]), "-o", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        log.write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
        if proc.returncode != 0:
            sys.exit(f"nvcc failed:\n{proc.stdout}{proc.stderr}")
        tmp.replace(lib)
    return lib, log.read_text() if log.exists() else ""


def load() -> Any:
    lib = ctypes.CDLL(str(build()[0]))
    lib.ptxgen_gemm_sp_bf16.restype = ctypes.c_int
    lib.ptxgen_gemm_sp_bf16.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 7
    lib.ptxgen_gemm_sp_bf16_config.restype = ctypes.c_int
    lib.ptxgen_gemm_sp_bf16_config.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 8
    lib.ptxgen_gemm_sp_error_string.restype = ctypes.c_char_p
    lib.ptxgen_gemm_sp_error_string.argtypes = [ctypes.c_int]
    return lib


def sparse_operand(torch: Any, m: int, k: int, gen: Any) -> tuple[Any, Any, Any]:
    """A random 2:4-sparse A: (A dense [m, k], A_c [m, k/2], E) in gemm_sp.cu's layout."""
    dev = gen.device
    a_c = torch.randn(m, k // 2, device=dev, dtype=torch.bfloat16, generator=gen)
    pat = torch.randint(0, len(PAIRS), (m, k // 4), device=dev, generator=gen)
    pairs = torch.tensor(PAIRS, device=dev)
    pos = pairs[pat]                                                    # [m, k/4, 2]
    cols = (torch.arange(k // 4, device=dev)[None, :, None] * 4 + pos).reshape(m, k // 2)
    a = torch.zeros(m, k, device=dev, dtype=torch.bfloat16)
    a.scatter_(1, cols, a_c)
    fields = (pos[..., 0] | (pos[..., 1] << 2)).to(torch.int64)       # [m, k/4]
    return a, a_c, meta_layout(torch, fields)


def meta_layout(torch: Any, fields: Any) -> Any:
    """E bytes from the 4-bit fields [M, K/4]: per (128-row block mb, 64-column block kt) 1 KB
    of 32-bit words ordered [warpgroup c][warp w][g][j][instruction i]; the word holds the
    fields of rows 128 mb + 64 c + 16 w + g (bits 15:0) and that + 8 (bits 31:16), groups
    16 kt + 8 i + 4 j + q at bits 4q (PTX ISA 9.7.15.6.2, sp-sel 0)."""
    m, kq = fields.shape
    f = fields.reshape(m // 128, 2, 4, 2, 8, kq // 16, 2, 2, 4)  # mb c w h g kt i j q
    shift = (4 * torch.arange(4, device=fields.device)).reshape(1, 1, 1, 1, 1, 1, 1, 1, 4)
    half = (f << shift).sum(-1)                                      # mb c w h g kt i j
    word = half[:, :, :, 0] | (half[:, :, :, 1] << 16)               # mb c w g kt i j
    word = word.permute(0, 4, 1, 2, 3, 6, 5).contiguous()            # mb kt c w g j i
    word = torch.where(word >= 2**31, word - 2**32, word).to(torch.int32)
    return word.reshape(-1).view(torch.uint8)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=8192, help="M = N = K")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20, help="timed calls per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sample-rows", type=int, default=256)
    ap.add_argument("--variants", action="store_true", help="also time the other variants")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--build-only", action="store_true", help="compile gemm_sp.cu and stop")
    ap.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=list(CONFIGS),
                    help="kernel configurations to check and time (default: all)")
    args = ap.parse_args()
    for name in [x for x in CONFIGS if x not in args.configs]:
        del CONFIGS[name]
    if args.build_only:
        lib_path, build_log = build()
        print(lib_path)
        print(build_log)
        return 0

    import torch

    _, build_log = build()
    lib = load()
    m = n = k = args.size
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    a, a_c, e = sparse_operand(torch, m, k, gen)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16, generator=gen)
    c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)

    def ours(stages: int, group_m: int, cluster: int, group_stages: int) -> None:
        err = lib.ptxgen_gemm_sp_bf16_config(a_c.data_ptr(), e.data_ptr(), b.data_ptr(),
                                             c.data_ptr(), m, n, k, stages, group_m, 0, cluster,
                                             group_stages)
        if err != 0:
            msg = lib.ptxgen_gemm_sp_error_string(err).decode() if err < 1000 else "see gemm_sp.cu"
            raise RuntimeError(f"ptxgen_gemm_sp_bf16 returned {err}: {msg}")

    def dense() -> Any:
        return torch.matmul(a, b.t())

    # torch's semi-structured sparse matmul, where this PyTorch has it
    semi: dict[str, Any] = {"available": False}
    semi_fn = None
    try:
        from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured

        a_sp = to_sparse_semi_structured(a)
        bt = b.t().contiguous()  # outside the timing: the layout its kernels take
        semi_fn = lambda: torch.mm(a_sp, bt)  # noqa: E731
        out = semi_fn()
        torch.cuda.synchronize()
        semi.update(available=True, backend=type(a_sp).__name__,
                    cusparselt="CUSPARSELT" in type(a_sp).__name__.upper()
                    or not getattr(SparseSemiStructuredTensor, "_FORCE_CUTLASS", True))
    except Exception as ex:  # report it; the rest of the benchmark does not depend on it
        semi["error"] = f"{type(ex).__name__}: {ex}"[:300]
        semi_fn = None

    # -- correctness (same inputs as the timing), each configuration --
    rows = torch.randperm(m, device=dev, generator=gen)[: args.sample_rows]
    ref = a[rows].double() @ b.double().t()
    cublas = dense()
    torch.cuda.synchronize()

    def rel(x: Any) -> float:
        return float(torch.linalg.norm(x.double() - ref) / torch.linalg.norm(ref))

    def check(name: str) -> dict[str, Any]:
        c.fill_(float("nan"))
        ours(*CONFIGS[name])
        torch.cuda.synchronize()
        out: dict[str, Any] = {"unwritten": int(torch.isnan(c).sum().item()),
                               "rel_err": rel(c[rows]),
                               "rel_diff_vs_cublas": float(
                                   torch.linalg.norm(c.double() - cublas.double())
                                   / torch.linalg.norm(cublas.double())),
                               "identical_to_cublas": float((c == cublas).double().mean().item())}
        # where C differs from cuBLAS by more than bf16 rounding (a diagnosis of a wrong C)
        bad = (c.float() - cublas.float()).abs() > 2**-6 * (cublas.float().abs() + 1)
        out["elements_off"] = int(bad.sum().item())
        if out["elements_off"]:
            where = bad.nonzero()[:8].tolist()
            out.update(first_off=where, rows_mod_256=sorted({r % 256 for r, _ in where}),
                       cols_mod_256=sorted({q % 256 for _, q in where}))
        out["correct"] = (out["unwritten"] == 0 and out["rel_err"] < 1e-2
                          and out["rel_diff_vs_cublas"] < 1e-2)
        return out

    configs: dict[str, dict[str, Any]] = {}
    for name in CONFIGS:
        try:
            configs[name] = check(name)
        except RuntimeError as ex:
            configs[name] = {"correct": False, "error": str(ex)}
    rel_cublas = rel(cublas[rows])
    if semi_fn is not None:
        out = semi_fn()
        torch.cuda.synchronize()
        semi["rel_err"] = rel(out[rows])
        semi["rel_diff_vs_cublas"] = float(torch.linalg.norm(out.double() - cublas.double())
                                           / torch.linalg.norm(cublas.double()))
        del out

    # -- timing --
    def time_calls(fn: Any, iters: int) -> list[float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for i in range(iters):
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]

    flop = 2.0 * m * n * k
    contenders: list[tuple[str, Any]] = [
        (name, lambda cfg=CONFIGS[name]: ours(*cfg)) for name in CONFIGS
        if configs[name]["correct"]]
    contenders.append(("cublas", dense))
    if semi_fn is not None:
        contenders.append(("semi", semi_fn))
    for _ in range(args.warmup):
        for _, fn in contenders:
            fn()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for _ in range(args.rounds):
        for name, fn in contenders:
            times[name] += time_calls(fn, args.iters)
    ms = {name: statistics.median(t) for name, t in times.items()}
    for name in CONFIGS:
        if name in ms:
            configs[name].update(ms=ms[name], tflops=flop / ms[name] / 1e9,
                                 ratio=ms["cublas"] / ms[name])
    timed = [name for name in CONFIGS if name in ms]
    best = min(timed, key=lambda x: ms[x]) if timed else next(iter(CONFIGS))
    correct = bool(timed) and rel_cublas < 1e-2
    ms_ours = ms.get(best, float("nan"))
    if semi_fn is not None:
        semi["ms"] = ms["semi"]
        semi["tflops"] = flop / ms["semi"] / 1e9
        semi["ratio_vs_cublas"] = ms["cublas"] / ms["semi"]
        semi["ours_vs_semi"] = ms["semi"] / ms_ours
    stages0, group0, cluster0, gs0 = CONFIGS[best]
    variants = []
    if args.variants and timed:
        for st, gm in VARIANTS:
            fn = lambda st=st, gm=gm: ours(st, gm, cluster0, gs0)  # noqa: E731
            try:
                for _ in range(3):
                    fn()
            except RuntimeError:  # not built for this configuration (3001)
                continue
            ts = time_calls(fn, args.iters * 2)
            variants.append({"stages": st, "group_m": gm, "cluster": cluster0,
                             "group_stages": gs0,
                             "ms": statistics.median(ts),
                             "tflops": flop / statistics.median(ts) / 1e9})
        # the reported configuration is still complete and equal afterwards
        if not check(best)["correct"]:
            correct = False

    regs = [line.strip() for line in build_log.splitlines()
            if "registers" in line or "spill" in line]
    chosen = configs[best]
    res = {
        "size": [m, n, k],
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "correct": correct,
        "unwritten": chosen.get("unwritten", -1),
        "rel_err_ours": chosen.get("rel_err", float("nan")),
        "rel_err_cublas": rel_cublas,
        "rel_diff_ours_vs_cublas": chosen.get("rel_diff_vs_cublas", float("nan")),
        "identical_to_cublas": chosen.get("identical_to_cublas", 0.0),
        "sample_rows": int(rows.numel()),
        "ms_ours": ms_ours,
        "ms_torch": ms["cublas"],
        "tflops_ours": flop / ms_ours / 1e9,
        "tflops_torch": flop / ms["cublas"] / 1e9,
        "ratio": ms["cublas"] / ms_ours,
        "reported": best,
        "configs": configs,
        "semi_structured": semi,
        "config": {"tile": "128x256x64 (dense K)", "stages": stages0, "group_m": group0,
                   "cluster": cluster0, "group_stages": gs0, "consumers": 2,
                   "persistent": True,
                   "instruction": "wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.bf16.bf16"},
        "timing": {"warmup": args.warmup, "iters": args.iters, "rounds": args.rounds,
                   "spread_ms": {name: [min(t), max(t)] for name, t in times.items()}},
        "variants": variants,
        "ptxas": regs,
    }
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    print(json.dumps({k: v for k, v in res.items() if k not in ("ptxas",)}, indent=2))
    for name, cfg in configs.items():
        if "ms" in cfg:
            print(f"ours {name:9s} {cfg['tflops']:7.1f} TFLOP/s  ({cfg['ms']:.3f} ms)   "
                  f"rel err {cfg['rel_err']:.2e}   ratio {cfg['ratio']:.3f}")
        else:
            print(f"ours {name:9s} not timed: {cfg}")
    print(f"cuBLAS (dense A)  {res['tflops_torch']:7.1f} TFLOP/s  ({ms['cublas']:.3f} ms)   "
          f"rel err {rel_cublas:.2e}")
    if semi_fn is not None:
        print(f"torch semi-structured {semi['tflops']:7.1f} TFLOP/s  ({ms['semi']:.3f} ms)")
    else:
        print(f"torch semi-structured: not timed ({semi.get('error')})")
    print(f"ratio ours ({best}) / cuBLAS {res['ratio']:.3f} (target 1.3)   correct={correct}")
    return 0 if correct else 1


if __name__ == "__main__":
    raise SystemExit(main())
