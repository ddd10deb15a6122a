"""README coverage table: ptxgen against CCCL's cuda::ptx for the issue-15 families, measured.

For each family: the forms of ptxgen's spec (all, and those that exist at PTX ISA <= 9.0),
the forms of CCCL's cuda::ptx wrappers, and how many of the (form, -arch) builds that CCCL
claims fail when built the way ``nvcc -arch=sm_XX[a|f]`` builds them.

CCCL forms. CCCL's generated headers (``cuda/__ptx/instructions/generated/*.h``) document
each wrapper with a comment block: the PTX syntax, "PTX ISA NN, SM_xx, ..." (the version and
the targets CCCL claims), the value lists of the template parameters and the C++ signature.
A CCCL form is one instantiation (one value per template parameter), i.e. one PTX text. The
headers are read for these facts only; nothing of them is copied into ptxgen.

Builds (``--compile``). ``nvcc -arch=sm_XXa`` (and ``sm_XXf``) runs two device passes:
cicc for compute_XX, verified by ``ptxas -arch=compute_XX``, and cicc for compute_XXa,
assembled by ``ptxas -arch=sm_XXa``; ``-arch=sm_XX`` runs the compute_XX pass only. The
script runs those passes on one translation unit with one kernel per CCCL form (CCCL's
include directory first) and attributes each ptxas error to its kernel. A claimed build
fails when any pass refuses the form; a plain SM_XX claim covers every target from sm_XX
on, SM_XXa / SM_XXf exactly that target.

usage: python scripts/cccl_coverage.py [--cccl INCLUDE] [--compile 13.0 13.5] [--jobs 2]
prints the Markdown table (and writes it with --out FILE).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import itertools
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

CCCL = "/work/toolkits/cccl-13.3/nvidia/cu13/include/cccl"
ISA = {"13.0": 90, "13.5": 95}
ARCHS = ["sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103a", "sm_103f",
         "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121a", "sm_121f"]
ARCHS_LATER = {"13.5": ["sm_107a", "sm_107f"]}

# (table row, ptxgen instruction ids, CCCL header name prefixes)
FAMILIES: list[tuple[str, list[str], list[str]]] = [
    ("cp.async.bulk.tensor (loads + stores)", ["cp_async_bulk_tensor"], ["cp_async_bulk_tensor"]),
    ("cp.async.bulk.prefetch.tensor", ["cp_async_bulk_prefetch_tensor"],
     ["cp_async_bulk_prefetch_tensor"]),
    ("cp.reduce.async.bulk.tensor", ["cp_reduce_async_bulk_tensor"],
     ["cp_reduce_async_bulk_tensor"]),
    ("cp.async.bulk", ["cp_async_bulk"], ["cp_async_bulk_multicast", "cp_async_bulk.h"]),
    ("cp.async.bulk.prefetch", ["cp_async_bulk_prefetch"], ["cp_async_bulk_prefetch.h"]),
    ("cp.reduce.async.bulk", ["cp_reduce_async_bulk"], ["cp_reduce_async_bulk.h",
                                                        "cp_reduce_async_bulk_bf16",
                                                        "cp_reduce_async_bulk_f16"]),
    ("cp.async.bulk.commit_group / wait_group",
     ["cp_async_bulk_commit_group", "cp_async_bulk_wait_group"],
     ["cp_async_bulk_commit_group", "cp_async_bulk_wait_group"]),
    ("mbarrier.init / inval", ["mbarrier_init", "mbarrier_inval"],
     ["mbarrier_init", "mbarrier_inval"]),
    ("mbarrier.arrive / arrive_drop", ["mbarrier_arrive", "mbarrier_arrive_drop"],
     ["mbarrier_arrive"]),
    ("mbarrier.expect_tx / complete_tx", ["mbarrier_expect_tx", "mbarrier_complete_tx"],
     ["mbarrier_expect_tx", "mbarrier_complete_tx"]),
    ("mbarrier.test_wait / try_wait", ["mbarrier_test_wait", "mbarrier_try_wait"],
     ["mbarrier_test_wait", "mbarrier_try_wait"]),
    ("mbarrier.pending_count / check_layout", ["mbarrier_pending_count", "mbarrier_check_layout"],
     ["mbarrier_pending_count", "mbarrier_check_layout"]),
    ("fence / fence.proxy / fence.mbarrier_init / membar",
     ["fence_thread", "fence_mbarrier_init", "fence_alias", "fence_proxy", "fence_proxy_tensormap",
      "fence_proxy_async_generic", "membar_level", "membar_proxy"], ["fence"]),
    ("setmaxnreg", ["setmaxnreg_action"], ["setmaxnreg"]),
    ("griddepcontrol", ["griddepcontrol_action"], []),
    ("barrier.cluster", ["barrier_cluster"], ["barrier_cluster"]),
    ("mapa", ["mapa_address"], []),
    ("cp.async (sm_80) + commit / wait", ["cp_async", "cp_async_commit_group",
                                          "cp_async_wait_group", "cp_async_wait_all"], []),
    ("cp.async.mbarrier.arrive", ["cp_async_mbarrier_arrive"], ["cp_async_mbarrier_arrive"]),
    ("elect.sync", ["elect_sync"], ["elect_sync"]),
    ("tensormap.replace", ["tensormap_replace"], ["tensormap_replace"]),
    ("tensormap.cp_fenceproxy", ["tensormap_cp_fenceproxy"], ["tensormap_cp_fenceproxy"]),
    ("clusterlaunchcontrol", ["clusterlaunchcontrol_try_cancel",
                              "clusterlaunchcontrol_query_cancel"], ["clusterlaunchcontrol"]),
]

C_TYPES = {"b8": "uint8_t", "b16": "uint16_t", "b32": "uint32_t", "b64": "uint64_t",
           "u32": "uint32_t", "s32": "int32_t", "u64": "uint64_t", "s64": "int64_t",
           "f16": "__half", "bf16": "__nv_bfloat16", "f32": "float", "f64": "double"}
SIZED = {"B8": "uint8_t", "B16": "uint16_t", "B32": "uint32_t", "B64": "uint64_t",
         "B128": "longlong2"}
LINE = re.compile(r"^ptxas \S+, line (\d+); (error|warning)\s*: (.*)$")


# -- ptxgen ------------------------------------------------------------------------------

def ptxgen_forms() -> dict[str, tuple[int, int]]:
    """{instruction id: (forms, forms that exist at PTX ISA <= 9.0)}."""
    from ptxgen.isa import ptx
    from ptxgen.model.instructions import vkey
    out = {}
    for ins in ptx.instruction_set().instructions:
        old = sum(1 for f in ins.forms
                  if f.support.since is None or vkey(f.support.since) <= (9, 0))
        out[ins.id] = (len(ins.forms), old)
    return out


# -- CCCL forms ---------------------------------------------------------------------------

def _family(header: str) -> str | None:
    for row, _, prefixes in FAMILIES:
        for p in prefixes:
            if (header == p[:-2]) if p.endswith(".h") else header.startswith(p):
                return row
    return None


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += 1 if ch in "<([" else (-1 if ch in ">)]" else 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def _blocks(text: str) -> list[dict[str, Any]]:
    out = []
    for m in re.finditer(r"/\*\n(.*?)\*/", text, re.S):
        joined = " ".join(m.group(1).split("\n"))
        jm = re.match(r"(.*?)\btemplate\s*(<.*)$", joined, re.S)
        claim = re.search(r"PTX ISA (\d+),\s*((?:SM_\w+(?:,\s*)?)+)", jm.group(1)) if jm else None
        if "__device__" not in joined or not jm or not claim:
            continue
        tm = re.match(r"template\s*<(.*?)>\s*__device__\s+(.*?)\s+(\w+)\s*\((.*)\);",
                      "template " + jm.group(2), re.S)
        if not tm:
            continue
        values = {vm.group(1).lower(): [v.strip() for v in vm.group(2).split(",") if v.strip()]
                  for vm in re.finditer(r"//\s*\.(\w+)\s*=\s*\{([^}]*)\}", jm.group(1))}
        out.append({"isa": int(claim.group(1)),
                    "sms": [s.strip() for s in claim.group(2).split(",") if s.strip()],
                    "values": values, "tparams": _split_top(tm.group(1)),
                    "ret": tm.group(2).strip(), "name": tm.group(3),
                    "params": _split_top(tm.group(4))})
    return out


def _enum_value(enum: str, text: str) -> str:
    t = text.lstrip(".")
    if enum == "dot_space":
        return {"shared::cluster": "cluster", "shared::cta": "shared", "shared": "shared",
                "global": "global"}[t]
    if enum == "dot_op":
        return {"and": "and_op", "or": "or_op", "xor": "xor_op"}.get(t, t)
    if enum == "dot_cta_group":
        return t.replace("::", "_")
    if enum == "dot_report_mechanism":
        return t.replace("mbarrier::report::", "").replace("validity::", "").replace("::", "_")
    if enum in ("dot_layout", "dot_phase_type"):
        return t.split("::")[-1]
    return t


def _instantiations(block: dict[str, Any]) -> list[dict[str, str]]:
    axes: list[list[tuple[str, str]]] = []
    for tp in block["tparams"]:
        if tp.startswith(("typename = void", "enable_if_t", "::cuda::std::enable_if")):
            continue
        m = re.match(r"cuda::ptx::(dot_\w+)\s+(\w+)", tp)
        if m:
            enum, name = m.groups()
            vals = block["values"].get(name.lower()) or block["values"].get(
                name.lower().replace("_", ""))
            if not vals and enum == "dot_space":
                vals = block["values"].get("dst") or block["values"].get("space")
            if not vals:
                raise ValueError(f"{block['name']}: no values for {name}")
            axes.append([(name, f"cuda::ptx::{enum}::{_enum_value(enum, v)}") for v in vals])
            continue
        m = re.match(r"int\s+(\w+)(?:\s*=\s*(-?\d+))?", tp)
        if m:
            axes.append([(m.group(1), m.group(2) if m.group(2) is not None else "128")])
            continue
        m = re.match(r"typename\s+(\w+)", tp)
        if not m:
            raise ValueError(f"{block['name']}: template parameter {tp}")
        name = m.group(1)
        if name in SIZED:
            axes.append([(name, SIZED[name])])
        elif name == "Type":
            axes.append([(name, C_TYPES[v.lstrip(".")])
                         for v in block["values"].get("type", [])])
        else:
            raise ValueError(f"{block['name']}: typename {name}")
    return [dict(c) for c in itertools.product(*axes)] if axes else [{}]


def _arg(ptype: str, inst: dict[str, str], decls: list[str], idx: int) -> str:
    t = ptype
    for k, v in inst.items():
        t = re.sub(rf"\b{k}\b", v, t)
    t = re.sub(r"\s*=\s*[^,]*$", "", t)
    m = re.match(r"(.*?)(\w+)$", t)
    typ = m.group(1).strip() if m and m.group(1).strip() and not t.endswith("_t") else t
    if "(&" in t:
        am = re.match(r"(const\s+)?([\w:]+)\s*\(&\s*(\w+)\)\[(\d+)\]", t)
        if not am:
            raise ValueError(f"array {t}")
        decls.append(f"{am.group(2)} a{idx}[{am.group(4)}] = {{}};")
        return f"a{idx}"
    if typ.endswith("*"):
        return f"({typ})p"
    if typ.endswith("&"):
        decls.append(f"{typ.rstrip('&').replace('const ', '').strip()} v{idx}{{}};")
        return f"v{idx}"
    if typ.startswith("cuda::ptx::"):
        return f"{typ}{{}}"
    if typ in ("uint32_t", "int32_t", "uint64_t", "bool", *C_TYPES.values(), *SIZED.values()):
        decls.append(f"{typ} v{idx}{{}};")
        return f"v{idx}"
    raise ValueError(f"argument type {t}")


def cccl_forms(include: Path) -> list[dict[str, Any]]:
    """Every CCCL form of the families: family, claimed ISA / targets and a test kernel."""
    forms: list[dict[str, Any]] = []
    for path in sorted((include / "cuda/__ptx/instructions/generated").glob("*.h")):
        fam = _family(path.stem)
        if fam is None:
            continue
        for block in _blocks(path.read_text()):
            for inst in _instantiations(block):
                decls: list[str] = []
                args = [_arg(p, inst, decls, i) for i, p in enumerate(block["params"])]
                first = block["tparams"][0] if block["tparams"] else ""
                fm = re.match(r"typename\s+(\w+)", first)
                explicit = ""
                if fm and fm.group(1) in inst and not any(
                        re.search(rf"\b{fm.group(1)}\b", p) for p in block["params"]):
                    explicit = f"<{inst[fm.group(1)]}>"  # a typename only the result uses
                call = f"cuda::ptx::{block['name']}{explicit}({', '.join(args)});"
                # keep every result alive: an unused non-volatile asm never reaches ptxas
                keep, body = [], call
                if block["ret"] not in ("void", ""):
                    body = f"auto r = {call}"
                    keep.append("__builtin_memcpy(p, &r, sizeof(r));")
                for j, d in enumerate(decls):
                    var = re.search(r"\b([av]\d+)\b", d)
                    assert var is not None
                    keep.append(f"__builtin_memcpy((char*)p + {64 * (j + 1)}, &{var.group(1)}, "
                                f"sizeof({var.group(1)}));")
                n = len(forms)
                kernel = (f"__global__ void k_{n}(void* p) {{ {' '.join(decls)} {body} "
                          f"{' '.join(keep)} }}")
                forms.append({"id": n, "family": fam, "isa": block["isa"], "sms": block["sms"],
                              "call": call, "kernel": kernel})
    return forms


# -- builds -------------------------------------------------------------------------------

def passes(arch: str) -> list[tuple[str, str]]:
    """(cicc -arch, ptxas -arch) of the device passes of ``nvcc -arch=ARCH``."""
    base = arch[3:].rstrip("af")
    if arch[-1] in "af":
        return [(f"compute_{base}", f"compute_{base}"), (f"compute_{arch[3:]}", arch)]
    return [(f"compute_{base}", arch)]


def claimed(sms: Sequence[str], arch: str) -> bool:
    for s in (x.lower() for x in sms):
        m = re.fullmatch(r"sm_(\d+)", s)
        if s == arch or (m and int(arch[3:].rstrip("af")) >= int(m.group(1))):
            return True
    return False


def failing_builds(forms: list[dict[str, Any]], release: str, include: Path,
                   jobs: int) -> dict[str, tuple[int, int]]:
    """{family: (claimed builds that fail, claimed builds)} for one toolkit."""
    import toolkits
    nvcc, ptxas = toolkits.require("nvcc", release), toolkits.require("ptxas", release)
    mine = [f for f in forms if f["isa"] <= ISA[release]]
    work = Path(tempfile.mkdtemp(prefix=f"cccl-{release}-"))
    tu = work / "all.cu"
    tu.write_text("\n".join(["#include <cuda/ptx>", "#include <cuda_fp16.h>",
                             "#include <cuda_bf16.h>", "#include <cstdint>",
                             "using namespace cuda::std;", ""] + [f["kernel"] for f in mine]))
    archs = ARCHS + ARCHS_LATER.get(release, [])

    def cicc(comp: str) -> None:
        # nvcc -ptx also verifies the PTX with ptxas (and fails on the forms that the
        # target lacks) but writes it: the ptxas runs below attribute those errors
        out = work / f"{comp}.ptx"
        p = subprocess.run(["nice", "-n", "19", nvcc, f"-I{include}", "-std=c++17",
                            f"-arch={comp}", "-ptx", str(tu), "-o", str(out)],
                           capture_output=True, text=True, check=False)
        if not out.is_file():
            raise RuntimeError(f"nvcc -arch={comp}: {(p.stdout + p.stderr)[:500]}")

    def assemble(job: tuple[str, str]) -> tuple[tuple[str, str], set[int] | None]:
        comp, parch = job
        ptx = work / f"{comp}.ptx"
        starts, ids = [], []
        for i, line in enumerate(ptx.read_text().splitlines(), 1):
            m = re.match(r"\.visible \.entry \S*k_(\d+)", line.strip())
            if m:
                starts.append(i)
                ids.append(int(m.group(1)))
        p = subprocess.run(["nice", "-n", "19", ptxas, f"-arch={parch}", "-o", "/dev/null",
                            str(ptx)], capture_output=True, text=True, check=False)
        bad = set()
        for line in (p.stdout + p.stderr).splitlines():
            m = LINE.match(line.strip())
            if m and m.group(2) == "error":
                k = bisect.bisect_right(starts, int(m.group(1))) - 1
                bad.add(ids[k] if k >= 0 else -1)
        if p.returncode and not bad:  # e.g. ptxas 13.5's internal error on sm_107a
            print(f"ptxas -arch={parch} failed without a line: "
                  f"{(p.stdout + p.stderr).strip().splitlines()[-1][:200]}", file=sys.stderr)
            return job, None
        return job, bad

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(cicc, sorted({c for a in archs for c, _ in passes(a)})))
        refused = dict(pool.map(assemble, sorted({pp for a in archs for pp in passes(a)})))
    out: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    unmeasured = [a for a in archs if any(refused[pp] is None for pp in passes(a))]
    if unmeasured:
        print(f"nvcc {release}: not measured (ptxas failed as a whole): {unmeasured}",
              file=sys.stderr)
    for f in mine:
        for a in archs:
            if a in unmeasured:
                continue
            if claimed(f["sms"], a):
                out[f["family"]][1] += 1
                out[f["family"]][0] += any(f["id"] in (refused[pp] or ()) for pp in passes(a))
    return {k: (v[0], v[1]) for k, v in out.items()}


def table(releases: Sequence[str], include: Path, jobs: int) -> str:
    ours = ptxgen_forms()
    forms = cccl_forms(include)
    builds = {r: failing_builds(forms, r, include, jobs) for r in releases}
    head = ("| family | ptxgen forms (all / PTX ISA <= 9.0) | CCCL 13.3 forms (all / <= 9.0) |"
            + "".join(f" CCCL claimed builds failing, nvcc {r} |" for r in releases))
    lines = [head, "|---|---:|---:|" + "---:|" * len(releases)]
    total = collections.Counter()
    for row, ids, _ in FAMILIES:
        p = sum(ours[i][0] for i in ids)
        p90 = sum(ours[i][1] for i in ids)
        c = sum(1 for f in forms if f["family"] == row)
        c90 = sum(1 for f in forms if f["family"] == row and f["isa"] <= 90)
        total.update({"p": p, "p90": p90, "c": c, "c90": c90})
        cells = []
        for r in releases:
            bad, n = builds[r].get(row, (0, 0))
            total.update({f"bad{r}": bad, f"n{r}": n})
            cells.append(f" {bad} of {n} |" if n else " - |")
        lines.append(f"| {row} | {p} / {p90} | {c} / {c90} |" + "".join(cells))
    lines.append(f"| **total** | {total['p']} / {total['p90']} | {total['c']} / {total['c90']} |"
                 + "".join(f" {total[f'bad{r}']} of {total[f'n{r}']} |" for r in releases))
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cccl", default=CCCL, help="CCCL include directory (holds cuda/ptx)")
    ap.add_argument("--compile", nargs="*", default=[], metavar="RELEASE",
                    help="toolkits whose nvcc builds every CCCL form (13.0, 13.5)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    text = table(args.compile, Path(args.cccl), args.jobs)
    if args.out:
        args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
