"""Write docs/gpu-results.md from one run of scripts/run_gpu.sh: the GPU, driver, nvcc and
PyTorch versions, each GPU test's outcome (from pytest's JUnit XML) and the GEMM benchmarks
(examples/wgmma_gemm/bench.py --json, examples/sparse_gemm/bench.py --json,
examples/fp8_gemm/bench.py --json), with Nsight Compute's reading of one sparse GEMM launch.

    python3 tests/gpu/report.py --out docs/gpu-results.md --gemm gemm.json \
        --gemm-sp gemm_sp.json --gemm-fp8 gemm_fp8.json --profile-sp ncu_gemm_sp.txt junit_*.xml
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


#: The outcomes counted per module, in the table's column order.
OUTCOMES = ("passed", "FAILED", "ERROR", "xfail", "skipped")


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
                    if tag == "skipped" and el.get("type") == "pytest.xfail":
                        outcome = "xfail"  # a strict xfail: a recorded deviation that held
                    msg = el.get("message") or ""
                    detail = msg.splitlines()[0][:200] if msg else ""
                    break
            module = (tc.get("classname") or "").rsplit(".", 1)[-1]
            tests.append({"module": module, "name": tc.get("name", ""), "outcome": outcome,
                          "time": tc.get("time", "0"), "detail": detail})
    return tests


def render_sparse(gemm: dict | None) -> list[str]:
    out = ["", "## 2:4-sparse bf16 GEMM (examples/sparse_gemm)", ""]
    if gemm is None:
        return out + ["The benchmark produced no result (see the run's log)."]
    semi = gemm.get("semi_structured", {})
    size = gemm["size"]
    out += ["TFLOP/s count the dense FLOPs (2 M N K) for every contender.", "",
            "| | TFLOP/s | median ms | ratio to cuBLAS dense | rel. error vs float64 |",
            "| --- | ---: | ---: | ---: | ---: |",
            f"| ours (ptxgen wgmma.mma_async.sp, A compressed + metadata; "
            f"{gemm.get('reported', 'default')}) | "
            f"**{gemm['tflops_ours']:.1f}** | {gemm['ms_ours']:.3f} | **{gemm['ratio']:.3f}** | "
            f"{gemm['rel_err_ours']:.2e} |"]
    for name, cfg in gemm.get("configs", {}).items():
        if name == gemm.get("reported"):
            continue
        if "ms" in cfg:
            out.append(f"| ours, {name} | {cfg['tflops']:.1f} | {cfg['ms']:.3f} | "
                       f"{cfg['ratio']:.3f} | {cfg['rel_err']:.2e} |")
        else:
            out.append(f"| ours, {name} | not timed: incorrect or failed "
                       f"({cfg.get('error') or cfg.get('elements_off')}) | | | |")
    out.append(f"| torch.matmul on the decompressed A (cuBLAS, dense) | "
               f"**{gemm['tflops_torch']:.1f}** | {gemm['ms_torch']:.3f} | 1.000 | "
               f"{gemm['rel_err_cublas']:.2e} |")
    if semi.get("available"):
        out.append(f"| torch semi-structured sparse (to_sparse_semi_structured, "
                   f"{'cuSPARSELt' if semi.get('cusparselt') else 'CUTLASS'}) | "
                   f"{semi['tflops']:.1f} | {semi['ms']:.3f} | {semi['ratio_vs_cublas']:.3f} | "
                   f"{semi['rel_err']:.2e} |")
    out += ["", f"**Ratio ours / dense cuBLAS at {'x'.join(str(x) for x in size)}: "
            f"{gemm['ratio']:.3f}** (target 1.3; the faster of the kernel configurations that "
            f"were correct in this run, all timed in the same interleaved rounds). "
            f"Correct: **{gemm['correct']}** (every "
            f"element written; relative difference from cuBLAS on the decompressed A over all of "
            f"C: {gemm['rel_diff_ours_vs_cublas']:.2e}, "
            f"{100 * gemm['identical_to_cublas']:.1f}% of the elements bit-identical)."]
    if semi.get("available"):
        out += ["", f"Ours / torch semi-structured: {semi['ours_vs_semi']:.3f}."]
    else:
        out += ["", f"torch semi-structured sparse matmul: not timed "
                f"({semi.get('error', '?')})."]
    t = gemm["timing"]
    spread = "; ".join(f"{k} {v[0]:.3f}-{v[1]:.3f} ms" for k, v in t["spread_ms"].items())
    out += ["", f"Kernel: {gemm['config']['instruction']}, {gemm['config']['tile']} tiles, "
            f"clusters of {gemm['config'].get('cluster', 1)} CTA(s), "
            f"{gemm['config'].get('group_stages', 1)} stage(s) per wgmma group, "
            f"{gemm['config']['stages']} stages, {gemm['config']['consumers']} consumer "
            f"warpgroups and a producer, persistent, tile groups of "
            f"{gemm['config']['group_m']} row blocks. Timing: median of {t['rounds']} x "
            f"{t['iters']} calls each, interleaved, after {t['warmup']} warm-up calls (CUDA "
            f"events); spread {spread}."]
    if gemm.get("variants"):
        out += ["", "Variants timed in the same run (after the main timing, not interleaved):",
                "", "| stages | group_m | cluster | ms | TFLOP/s |",
                "| ---: | ---: | ---: | ---: | ---: |"]
        out += [f"| {v['stages']} | {v['group_m']} | {v.get('cluster', 1)} | {v['ms']:.3f} | "
                f"{v['tflops']:.1f} |" for v in gemm["variants"]]
    if gemm.get("ptxas"):
        out += ["", "ptxas: " + "; ".join(sorted(set(gemm["ptxas"])))]
    return out + ["", "What limits it: see examples/sparse_gemm/README.md (and the profile "
                  "below)."]


#: Nsight Compute metrics quoted from the profile of one sparse GEMM launch.
PROFILE_METRICS = ("SM Frequency", "Duration", "Compute (SM) Throughput",
                   "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                   "L2 Cache Throughput", "L1/TEX Cache Throughput", "DRAM Throughput",
                   "Issue Slots Busy", "No Eligible", "Warp Cycles Per Issued Instruction")


def render_profile(text: str | None) -> list[str]:
    """The quoted metrics of `ncu --section SpeedOfLight --section WarpStateStats ...` on one
    launch of the reported sparse configuration (scripts/run_gpu.sh, step profile_gemm_sp)."""
    out = ["", "### Profile of one sparse GEMM launch (Nsight Compute)", ""]
    if not text:
        return out + ["Not profiled in this run (ncu missing or the step not run)."]
    rows = []
    for line in text.splitlines():
        parts = line.split()
        for name in PROFILE_METRICS:
            if line.strip().startswith(name + " ") and len(parts) >= 2:
                rows.append(f"| {name} | {parts[-2] if len(parts) > 2 else ''} | {parts[-1]} |")
    if not rows:
        return out + ["ncu printed none of the expected metrics (see ncu_gemm_sp.txt in the "
                      "artifacts)."]
    return out + ["`ncu --clock-control none` (the clocks as the card runs them), one launch of "
                  "the reported configuration after two warm-up launches, caches flushed by "
                  "ncu first:", "", "| metric | unit | value |", "| --- | --- | ---: |", *rows]


def render_clocks(text: str | None) -> list[str]:
    """nvidia-smi's samples (SM clock MHz, power W, power limit W, clock-event reasons) taken
    every 200 ms while the sparse GEMM benchmark ran."""
    rows = []
    for line in (text or "").splitlines():
        parts = [x.strip() for x in line.split(",")]
        try:
            rows.append((float(parts[0]), float(parts[1]), float(parts[2]), int(parts[3], 16)))
        except (ValueError, IndexError):
            continue
    busy = [r for r in rows if r[1] > 0.5 * r[2]]  # samples under load
    if not busy:
        return []
    clocks = sorted(r[0] for r in busy)
    reasons = 0
    for r in busy:
        reasons |= r[3]
    return ["", f"While the sparse benchmark ran (nvidia-smi every 200 ms, {len(busy)} samples "
            f"above half the power limit): SM clock median {clocks[len(clocks) // 2]:.0f} MHz "
            f"(min {clocks[0]:.0f}, max {clocks[-1]:.0f}), power up to "
            f"{max(r[1] for r in busy):.0f} W of {busy[0][2]:.0f} W, clock-event reasons seen "
            f"{reasons:#x} (0x4: software power cap, 0x20 / 0x40: thermal slowdown)."]


def render_fp8(gemm: dict | None) -> list[str]:
    out = ["", "## FP8 GEMM, e4m3 x e4m3 -> f32 -> bf16 (examples/fp8_gemm)", ""]
    if gemm is None:
        return out + ["The benchmark produced no result (see the run's log)."]
    cfg = gemm["config"]
    out += [f"examples/wgmma_gemm/gemm.cu built with `-DPTXGEN_GEMM_E4M3`: {cfg['instruction']}, "
            f"{cfg['tile']} tiles, {cfg['stages']} stages, per-tensor scales (device memory) "
            f"applied to the f32 accumulators before the rounding to bf16; no asm but the "
            f"generated wrappers'. Contender: `torch._scaled_mm(A, B.t(), scale_a, scale_b, "
            f"out_dtype=torch.bfloat16)` (cuBLASLt), as called by default (use_fast_accum=False: "
            f"partial sums promoted into f32 every few k blocks) and with use_fast_accum=True "
            f"(the tensor cores accumulate throughout, as ours does). All timed in the same "
            f"interleaved rounds per problem (ratio = their time / ours).", "",
            "| M x N x K | configuration | TFLOP/s | ratio to _scaled_mm | ratio to fast accum "
            "| rel. error vs float64 | = ref. |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for prob in gemm["problems"]:
        pm = "x".join(str(x) for x in prob["size"])
        for name, c in prob["configs"].items():
            b = "**" if name == prob["reported"] else ""
            out.append(f"| {pm} | {b}{name}{b} | {b}{c['tflops']:.1f}{b} | {b}{c['ratio']:.3f}{b} "
                       f"| {c['ratio_fast']:.3f} | {c['rel_err']:.2e} | "
                       f"{c['identical_to_reference']} |")
        out.append(f"| {pm} | torch._scaled_mm | {prob['tflops_scaled_mm']:.1f} | 1.000 | | "
                   f"{prob['rel_err_scaled_mm']:.2e} | |")
        out.append(f"| {pm} | torch._scaled_mm, use_fast_accum | "
                   f"{prob['tflops_scaled_mm_fast']:.1f} | | 1.000 | "
                   f"{prob['rel_err_scaled_mm_fast']:.2e} | |")
    main = gemm["problems"][0]
    mnk = "x".join(str(x) for x in main["size"])
    tols = ", ".join(f"{p['tolerance']:.3f}" for p in gemm["problems"])
    out += ["", f"**Ratio ours / torch._scaled_mm at {mnk}: {main['ratio']:.3f}** (to the fast "
            f"accumulation: {main['ratio_fast']:.3f}; target 1.0). Correct: **{gemm['correct']}**"
            f" (every problem: every element written; relative Frobenius error against a float64 "
            f"product of the dequantized operands within the tolerance 2^-8 + 2^-11 sqrt(K), "
            f"{tols}; every configuration "
            f"bit-identical to `cluster1`). The tolerance's basis (PTX ISA, wgmma.mma_async, "
            f"Precision and rounding: e4m3 / e5m2 into f32 accumulate \"at higher than half "
            f"precision but lower than single precision\"): 2^-8 for the bf16 rounding of C, "
            f"2^-11 sqrt(K) for K accumulation steps rounding no worse than half precision, with "
            f"errors of random sign; torch's results are held to it too. Relative difference "
            f"from torch._scaled_mm over all of C at {mnk}: {main['rel_diff_vs_scaled_mm']:.2e} "
            f"(from the fast accumulation: {main['rel_diff_vs_scaled_mm_fast']:.2e})."]
    t = main["timing"]
    out += ["", f"Timing: median of {t['rounds']} x {t['iters']} calls each, interleaved, after "
            f"{t['warmup']} warm-up calls (CUDA events)."]
    if gemm.get("ptxas"):
        out += ["", "ptxas: " + "; ".join(sorted(set(gemm["ptxas"])))]
    return out + ["", "What limits it: see examples/fp8_gemm/README.md."]


def render(tests: list[dict[str, str]], gemm: dict | None, seed: str, command: str,
           gemm_sp: dict | None = None, gemm_fp8: dict | None = None,
           profile_sp: str | None = None, smi_sp: str | None = None) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# GPU results", "",
           f"Produced by `{command}` on {now} (issues 8, 17, 29). Random operands: "
           f"`PTXGEN_GPU_SEED={seed}`. Do not edit by hand: rerun the script (see the end).", ""]
    out += ["## Environment", "", "| | |", "| --- | --- |"]
    out += [f"| {k} | {v.replace('|', '/')} |" for k, v in environment()]

    out += ["", "## GPU tests", ""]
    modules: dict[str, dict[str, int]] = {}
    for t in tests:
        m = modules.setdefault(t["module"], dict.fromkeys(OUTCOMES, 0))
        m[t["outcome"]] += 1
    out += ["| module | passed | failed | errors | strict xfail (recorded deviation) | skipped |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, m in modules.items():
        out.append(f"| tests/gpu/{name}.py | " + " | ".join(str(m[k]) for k in OUTCOMES) + " |")
    total = {k: sum(m[k] for m in modules.values()) for k in OUTCOMES}
    out.append("| **all** | " + " | ".join(f"**{total[k]}**" for k in OUTCOMES) + " |")
    held = [t for t in tests if t["outcome"] == "xfail"]
    if held:
        out += ["", "Strict xfails: each is a place where this GPU disagrees with the PTX ISA "
                "document, recorded in the test; it fails the run if the GPU ever agrees:", ""]
        out += [f"- `{t['module']}::{t['name']}`: {t['detail']}" for t in held]
    sp_forms = [t for t in tests if t["module"] == "test_wgmma_sp"
                and t["name"].startswith("test_wgmma_sp[")
                and ".scale" not in t["name"] and ".transb" not in t["name"]]
    if sp_forms:
        ok = sum(t["outcome"] == "passed" for t in sp_forms)
        out += ["", f"wgmma.mma_async.sp: **{ok} of {len(sp_forms)}** sm_90a forms (A from a "
                f"descriptor and from registers) pass with every sparsity-selector value, "
                f"against the dense product of the expanded A (tests/gpu/test_wgmma_sp.py)."]
    families = {"TMA tile loads 1d-5d": "test_tma_tile_load[",
                "TMA tile stores 1d-5d": "test_tma_tile_store[",
                "TMA tile store at a negative coordinate faults": "test_tma_tile_store_negative",
                "shared::cta address of a cluster CTA in a wgmma descriptor":
                    "test_cluster_shared_address",
                "TMA im2col loads 3d-5d": "test_tma_im2col_load[",
                "TMA multicast, 2-CTA cluster": "test_tma_multicast_cluster2[",
                "cp.async.bulk (non-tensor)": "test_bulk_copy[",
                "mbarrier": "test_mbarrier_", "setmaxnreg pipeline": "test_setmaxnreg_",
                "cp.async (sm_80 path)": "test_cp_async["}
    async_rows = []
    for family, prefix in families.items():
        got = [t for t in tests if t["module"] == "test_async" and t["name"].startswith(prefix)]
        if got:
            ok = sum(t["outcome"] == "passed" for t in got)
            async_rows.append(f"| {family} | {ok} of {len(got)} |")
    if async_rows:
        out += ["", "Async families through the generated wrappers (tests/gpu/test_async.py):", "",
                "| family | passed |", "| --- | ---: |", *async_rows]
    bad = [t for t in tests if t["outcome"] in ("FAILED", "ERROR")]
    if bad:
        out += ["", "Failures:", ""]
        out += [f"- `{t['module']}::{t['name']}`: {t['outcome']} {t['detail']}" for t in bad]

    out += ["", "## wgmma bf16 GEMM (examples/wgmma_gemm)", ""]
    if gemm is None:
        out.append("The benchmark produced no result (see the run's log).")
    else:
        mnk = "x".join(str(x) for x in gemm["size"])
        cfg = gemm["config"]
        out += ["| | ours (ptxgen wgmma) | torch.matmul (cuBLAS) |", "| --- | ---: | ---: |",
                f"| TFLOP/s, M=N=K={gemm['size'][0]} | **{gemm['tflops_ours']:.1f}** | "
                f"**{gemm['tflops_torch']:.1f}** |",
                f"| median time (ms) | {gemm['ms_ours']:.3f} | {gemm['ms_torch']:.3f} |",
                f"| rel. error vs float64 ({gemm['sample_rows']} random rows) | "
                f"{gemm['rel_err_ours']:.2e} | {gemm['rel_err_cublas']:.2e} |", "",
                f"**Ratio ours / cuBLAS: {gemm['ratio']:.3f}** ({100 * gemm['ratio']:.1f}% of "
                f"cuBLAS; target 1.0). Correct: **{gemm['correct']}** (every element written; "
                f"relative difference from cuBLAS over all of C: "
                f"{gemm['rel_diff_ours_vs_cublas']:.2e}"
                + (f", {100 * gemm['identical_to_cublas']:.2f}% of the elements equal to "
                   f"cuBLAS's bit for bit" if "identical_to_cublas" in gemm else "") + ").", "",
                f"Problem {mnk}, bf16 in and out, f32 accumulation, C = A B^T. Kernel "
                f"({gemm.get('reported', 'default')}): "
                f"{cfg['tile']} tiles, {cfg['stages']} TMA stages, "
                f"{cfg['consumers']} consumer warpgroups (m64n256k16) and a producer, "
                f"persistent, tile groups of {cfg['group_m']} row blocks"
                + (f", clusters of {cfg['cluster']} CTAs sharing B by TMA multicast"
                   if cfg.get("cluster", 1) > 1 else "")
                + (", stream-K tail" if cfg.get("streamk") else "")
                + (", C written by TMA stores from shared memory" if cfg.get("tma_store")
                   else "") + ". Timing: "
                f"median of {gemm['timing']['rounds']} x {gemm['timing']['iters']} calls each, "
                f"interleaved, after {gemm['timing']['warmup']} warm-up calls (CUDA events); "
                f"spread ours {gemm['timing']['spread_ours_ms'][0]:.3f}-"
                f"{gemm['timing']['spread_ours_ms'][1]:.3f} ms, torch "
                f"{gemm['timing']['spread_torch_ms'][0]:.3f}-"
                f"{gemm['timing']['spread_torch_ms'][1]:.3f} ms."]
        if gemm.get("problems"):
            out += ["", "Every problem and kernel configuration, each problem's configurations "
                    "and cuBLAS timed in the same interleaved rounds (ratio = cuBLAS time / "
                    "ours; \"= ref.\": C bit-identical to the `cluster1` configuration's, the "
                    "algorithm of the previous kernel):", "",
                    "| M x N x K | configuration | TFLOP/s | ratio to cuBLAS | rel. error | "
                    "= ref. | = cuBLAS |", "| --- | --- | ---: | ---: | ---: | --- | ---: |"]
            for prob in gemm["problems"]:
                pm = "x".join(str(x) for x in prob["size"])
                for name, c in prob.get("configs", {}).items():
                    bold = "**" if name == prob.get("reported") else ""
                    out.append(f"| {pm} | {bold}{name}{bold} | {bold}{c['tflops']:.1f}{bold} | "
                               f"{bold}{c['ratio']:.3f}{bold} | {c['rel_err']:.2e} | "
                               f"{c['identical_to_reference']} | "
                               f"{100 * c['identical_to_cublas']:.2f}% |")
                out.append(f"| {pm} | torch.matmul (cuBLAS) | {prob['tflops_torch']:.1f} | "
                           f"1.000 | {prob['rel_err_cublas']:.2e} | | |")
        if gemm.get("variants"):
            out += ["", f"Variants of the {gemm.get('reported', 'default')} configuration at "
                    f"{mnk}, timed in the same run (after the main timing, not interleaved):", "",
                    "| stages | group_m | ms | TFLOP/s |", "| ---: | ---: | ---: | ---: |"]
            out += [f"| {v['stages']} | {v['group_m']} | {v['ms']:.3f} | {v['tflops']:.1f} |"
                    for v in gemm["variants"]]
        if gemm.get("ptxas"):
            out += ["", "ptxas: " + "; ".join(sorted(set(gemm["ptxas"])))]
        out += ["", "What limits it: see examples/wgmma_gemm/README.md."]
    out += render_sparse(gemm_sp)
    out += render_profile(profile_sp)
    out += render_clocks(smi_sp)
    out += render_fp8(gemm_fp8)

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
            "It builds the kernels (tests/gpu/build.py) and the three GEMMs, runs `python3 -m "
            "pytest -m gpu tests/gpu/test_<module>.py` for each module, runs "
            "`python3 examples/wgmma_gemm/bench.py --variants`, "
            "`python3 examples/sparse_gemm/bench.py --variants` and "
            "`python3 examples/fp8_gemm/bench.py`, profiles one sparse GEMM launch with "
            "`ncu --clock-control none` where ncu can read the counters, and writes this file "
            "to docs/gpu-results.md and to `$OUT` (about 6 minutes on an H200, the machine's "
            "start not counted; PTXGEN_GPU_STEPS runs a part of it, see the script). Without a "
            "GPU (CI) the tests in tests/gpu are skipped."]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("junit", nargs="*", type=Path)
    ap.add_argument("--gemm", type=Path)
    ap.add_argument("--gemm-sp", type=Path)
    ap.add_argument("--gemm-fp8", type=Path)
    ap.add_argument("--profile-sp", type=Path, help="ncu's output for one sparse GEMM launch")
    ap.add_argument("--smi-sp", type=Path, help="nvidia-smi samples during the sparse benchmark")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", default="")
    ap.add_argument("--command", default="bash scripts/run_gpu.sh")
    args = ap.parse_args()
    tests = read_junit([p for p in args.junit if p.exists()])
    gemm = json.loads(args.gemm.read_text()) if args.gemm and args.gemm.exists() else None
    gemm_sp = (json.loads(args.gemm_sp.read_text())
               if args.gemm_sp and args.gemm_sp.exists() else None)
    gemm_fp8 = (json.loads(args.gemm_fp8.read_text())
                if args.gemm_fp8 and args.gemm_fp8.exists() else None)
    profile = (args.profile_sp.read_text(errors="replace")
               if args.profile_sp and args.profile_sp.exists() else None)
    smi = args.smi_sp.read_text() if args.smi_sp and args.smi_sp.exists() else None
    args.out.write_text(render(tests, gemm, args.seed, args.command, gemm_sp, gemm_fp8, profile,
                               smi))
    print(f"wrote {args.out}: {len(tests)} tests, gemm={'yes' if gemm else 'no'}, "
          f"gemm_sp={'yes' if gemm_sp else 'no'}, gemm_fp8={'yes' if gemm_fp8 else 'no'}, "
          f"profile_sp={'yes' if profile else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
