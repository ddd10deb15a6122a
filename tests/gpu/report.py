"""Write docs/gpu-results.md from one run of scripts/run_gpu.sh: the GPU, driver, nvcc and
PyTorch versions, each GPU test's outcome (from pytest's JUnit XML) and the GEMM benchmark
(examples/wgmma_gemm/bench.py --json).

    python3 tests/gpu/report.py --out docs/gpu-results.md --gemm gemm.json junit_*.xml
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path


def _cmd(*args: str) -> str:
    if shutil.which(args[0]) is None:
        return f"({args[0]} not found)"
    proc = subprocess.run(list(args), capture_output=True, text=True, check=False)
    return (proc.stdout or proc.stderr).strip()


def environment() -> list[tuple[str, str]]:
    rows = []
    smi = _cmd("nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,"
               "power.limit", "--format=csv,noheader")
    rows.append(("GPU (nvidia-smi: name, driver, memory, max SM clock, power limit)", smi))
    nvcc = _cmd("nvcc", "--version").splitlines()
    rows.append(("nvcc", next((x for x in nvcc if "release" in x), " ".join(nvcc[-1:]))))
    try:
        import torch

        rows.append(("PyTorch / CUDA runtime", f"{torch.__version__} / {torch.version.cuda}"))
        p = torch.cuda.get_device_properties(0)
        rows.append(("device properties", f"{p.name}, compute capability {p.major}.{p.minor}, "
                     f"{p.multi_processor_count} SMs"))
    except Exception as e:  # pragma: no cover - report what happened
        rows.append(("PyTorch", f"unavailable: {e}"))
    return rows


def read_junit(paths: list[Path]) -> list[dict[str, str]]:
    tests = []
    for path in paths:
        root = ET.parse(path).getroot()
        for tc in root.iter("testcase"):
            outcome, detail = "passed", ""
            for tag in ("failure", "error", "skipped"):
                el = tc.find(tag)
                if el is not None:
                    outcome = {"failure": "FAILED", "error": "ERROR", "skipped": "skipped"}[tag]
                    msg = el.get("message") or ""
                    detail = msg.splitlines()[0][:200] if msg else ""
                    break
            module = (tc.get("classname") or "").rsplit(".", 1)[-1]
            tests.append({"module": module, "name": tc.get("name", ""), "outcome": outcome,
                          "time": tc.get("time", "0"), "detail": detail})
    return tests


def render(tests: list[dict[str, str]], gemm: dict | None, seed: str, command: str) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# GPU results", "",
           f"Produced by `{command}` on {now} (issue 8). Random operands: "
           f"`PTXGEN_GPU_SEED={seed}`. Do not edit by hand: rerun the script (see the end).", ""]
    out += ["## Environment", "", "| | |", "| --- | --- |"]
    out += [f"| {k} | {v.replace('|', '/')} |" for k, v in environment()]

    out += ["", "## GPU tests", ""]
    modules: dict[str, dict[str, int]] = {}
    for t in tests:
        m = modules.setdefault(t["module"], {"passed": 0, "FAILED": 0, "ERROR": 0, "skipped": 0})
        m[t["outcome"]] += 1
    out += ["| module | passed | failed | errors | skipped |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for name, m in modules.items():
        out.append(f"| tests/gpu/{name}.py | {m['passed']} | {m['FAILED']} | {m['ERROR']} | "
                   f"{m['skipped']} |")
    total = {k: sum(m[k] for m in modules.values())
             for k in ("passed", "FAILED", "ERROR", "skipped")}
    out.append(f"| **all** | **{total['passed']}** | **{total['FAILED']}** | "
               f"**{total['ERROR']}** | "
               f"**{total['skipped']}** |")
    bad = [t for t in tests if t["outcome"] in ("FAILED", "ERROR")]
    if bad:
        out += ["", "Failures:", ""]
        out += [f"- `{t['module']}::{t['name']}`: {t['outcome']} {t['detail']}" for t in bad]

    out += ["", "## wgmma bf16 GEMM (examples/wgmma_gemm)", ""]
    if gemm is None:
        out.append("The benchmark produced no result (see the run's log).")
    else:
        mnk = "x".join(str(x) for x in gemm["size"])
        out += ["| | ours (ptxgen wgmma) | torch.matmul (cuBLAS) |", "| --- | ---: | ---: |",
                f"| TFLOP/s, M=N=K={gemm['size'][0]} | **{gemm['tflops_ours']:.1f}** | "
                f"**{gemm['tflops_torch']:.1f}** |",
                f"| median time (ms) | {gemm['ms_ours']:.3f} | {gemm['ms_torch']:.3f} |",
                f"| rel. error vs float64 ({gemm['sample_rows']} random rows) | "
                f"{gemm['rel_err_ours']:.2e} | {gemm['rel_err_cublas']:.2e} |", "",
                f"**Ratio ours / cuBLAS: {gemm['ratio']:.3f}** ({100 * gemm['ratio']:.1f}% of "
                f"cuBLAS; target 70%). Correct: **{gemm['correct']}** (every element written; "
                f"relative difference from cuBLAS over all of C: "
                f"{gemm['rel_diff_ours_vs_cublas']:.2e}).", "",
                f"Problem {mnk}, bf16 in and out, f32 accumulation, C = A B^T. Kernel: "
                f"{gemm['config']['tile']} tiles, {gemm['config']['stages']} TMA stages, "
                f"{gemm['config']['consumers']} consumer warpgroups (m64n256k16) and a producer, "
                f"persistent, tile groups of {gemm['config']['group_m']} row blocks. Timing: "
                f"median of {gemm['timing']['rounds']} x {gemm['timing']['iters']} calls each, "
                f"interleaved, after {gemm['timing']['warmup']} warm-up calls (CUDA events); "
                f"spread ours {gemm['timing']['spread_ours_ms'][0]:.3f}-"
                f"{gemm['timing']['spread_ours_ms'][1]:.3f} ms, torch "
                f"{gemm['timing']['spread_torch_ms'][0]:.3f}-"
                f"{gemm['timing']['spread_torch_ms'][1]:.3f} ms."]
        if gemm.get("variants"):
            out += ["", "Variants timed in the same run:", "",
                    "| stages | group_m | ms | TFLOP/s |", "| ---: | ---: | ---: | ---: |"]
            out += [f"| {v['stages']} | {v['group_m']} | {v['ms']:.3f} | {v['tflops']:.1f} |"
                    for v in gemm["variants"]]
        if gemm.get("ptxas"):
            out += ["", "ptxas: " + "; ".join(sorted(set(gemm["ptxas"])))]
        out += ["", "What limits it: see examples/wgmma_gemm/README.md."]

    out += ["", "## Blackwell (tcgen05)", "",
            "No Blackwell GPU is available, so tcgen05.mma is not run here: for tcgen05 the ptxas "
            "conformance matrix (generated/tests/test_ptxas_conformance.py: every generated "
            "wrapper assembled by ptxas for each target) is the proof. Everything above ran on "
            "the Hopper GPU listed."]

    out += ["", "## Each test", "", "<details><summary>"
            f"{len(tests)} tests</summary>", "", "| test | result |", "| --- | --- |"]
    out += [f"| `{t['module']}::{t['name']}` | {t['outcome']} |" for t in tests]
    out += ["", "</details>", "", "## Rerun", "",
            "Through the device tool (an H100 or H200), from the repository root:", "",
            "```", "bash scripts/run_gpu.sh \"$OUT\"", "```", "",
            "It builds the kernels (tests/gpu/build.py), runs `python3 -m pytest -m gpu "
            "tests/gpu/test_<module>.py` for each module, runs "
            "`python3 examples/wgmma_gemm/bench.py --variants`, and writes this file to "
            "docs/gpu-results.md and to `$OUT`. Without a GPU (CI) the tests in tests/gpu are "
            "skipped."]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("junit", nargs="*", type=Path)
    ap.add_argument("--gemm", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", default="")
    ap.add_argument("--command", default="bash scripts/run_gpu.sh")
    args = ap.parse_args()
    tests = read_junit([p for p in args.junit if p.exists()])
    gemm = json.loads(args.gemm.read_text()) if args.gemm and args.gemm.exists() else None
    args.out.write_text(render(tests, gemm, args.seed, args.command))
    print(f"wrote {args.out}: {len(tests)} tests, gemm={'yes' if gemm else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
