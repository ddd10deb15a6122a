"""Build the GPU test kernels (tests/gpu/kernels/*.cu) into shared libraries.

Each library is compiled by nvcc for sm_90a (``-gencode=arch=compute_90a,code=sm_90a``:
the plain ``-arch=sm_90a`` of nvcc 13.0 also runs a compute_90 pass without the feature
macros) against generated/include only. Outputs are cached under a directory named by a
hash of the sources, the headers and the flags ($PTXGEN_GPU_BUILD, else the system's
temporary directory), so a second run reuses them.

    python3 tests/gpu/build.py            # build all, in parallel; print the paths
    python3 tests/gpu/build.py wgmma      # one
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: make the package "gpu" importable
    sys.path.insert(0, str(HERE.parent))

from gpu import forms  # noqa: E402

KERNELS = HERE / "kernels"
ROOT = HERE.parents[1]
INCLUDE = ROOT / "generated" / "include"
ARCH = "-gencode=arch=compute_90a,code=sm_90a"
#: The sparse wgmma cases are split over forms.WGMMA_SP_PARTS libraries wgmma_sp0, ...,
#: each built from kernels/wgmma_sp.cu with its own part of the cases.
WGMMA_SP_LIBS = tuple(f"wgmma_sp{p}" for p in range(forms.WGMMA_SP_PARTS))
LIBS = ("mma_sync", "mma_sp", "ldmatrix", "wgmma", *WGMMA_SP_LIBS, "async", "elect", "cvt",
        "approx", "warp", "bits", "memory", "st_async")
#: CI's compile check (tests/test_gpu_kernels_build.py): the libraries, the sparse wgmma
#: cases as one library of a covering sample of them (forms.wgmma_sp_sample()).
WGMMA_SP_SAMPLE = "wgmma_sp_sample"
CHECK_LIBS = tuple(n for n in LIBS if n not in WGMMA_SP_LIBS) + (WGMMA_SP_SAMPLE,)
FLAGS = ["-std=c++17", "-O2", ARCH, "-Xcompiler", "-fPIC", "-shared",
         "-Xptxas", "-warn-spills"]
#: Flags of one library only: the async kernels' build log keeps ptxas's register counts
#: (tests/gpu/test_async.py reads the setmaxnreg kernel's from it).
LIB_FLAGS = {"async": ["-Xptxas", "-v"]}
#: CI's compile check (no GPU runs the result): NVVM without optimisation, which is most of
#: a library's build time (wgmma_sp0: 24 s of cicc at -O2, 9 s at -O0). The C++ front end,
#: every asm statement and ptxas see the same code; the libraries a GPU runs are built
#: without it. Not for async, whose register counts test_async checks.
CHECK_FLAGS = ["-Xcicc", "-O0"]


class BuildError(RuntimeError):
    pass


def nvcc() -> str:
    path = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if path is None:
        raise BuildError("nvcc not found")
    return path


def _generated_inputs(name: str) -> dict[str, str]:
    """Files written next to the build (form lists read from the generated headers)."""
    if name == "mma_sync":
        return {"mma_forms.inc": forms.mma_inc()}
    if name == "mma_sp":
        return {"mma_sp_forms.inc": forms.mma_sp_inc()}
    if name == "wgmma":
        return {"wgmma_cases.inc": forms.wgmma_inc()}
    if name in WGMMA_SP_LIBS:
        return {"wgmma_sp_cases.inc": forms.wgmma_sp_inc(WGMMA_SP_LIBS.index(name))}
    if name == WGMMA_SP_SAMPLE:
        return {"wgmma_sp_cases.inc": forms.wgmma_sp_inc(None)}
    return {}


def source(name: str) -> Path:
    """The kernel file a library is built from."""
    sparse = name in WGMMA_SP_LIBS or name == WGMMA_SP_SAMPLE
    return KERNELS / ("wgmma_sp.cu" if sparse else f"{name}.cu")


def flags(name: str, check: bool = False, device_only: bool = False) -> list[str]:
    """nvcc's flags; ``device_only``: the device code alone (-cubin: no host compilation,
    no link), for a compile check."""
    out = FLAGS + LIB_FLAGS.get(name, []) + (CHECK_FLAGS if check and name != "async" else [])
    if device_only:
        out = [f for f in out if f not in ("-Xcompiler", "-fPIC", "-shared")] + ["-cubin"]
    return out


def _digest(name: str, extra: dict[str, str], check: bool = False,
            device_only: bool = False) -> str:
    h = hashlib.sha256()
    h.update(" ".join(flags(name, check, device_only)).encode())
    for p in sorted(KERNELS.glob("*")) + sorted((INCLUDE / "ptxgen").rglob("*.hpp")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    for k, v in sorted(extra.items()):
        h.update(k.encode())
        h.update(v.encode())
    h.update(name.encode())
    return h.hexdigest()[:16]


def build_dir() -> Path:
    base = os.environ.get("PTXGEN_GPU_BUILD")
    return Path(base) if base else Path(tempfile.gettempdir()) / "ptxgen-gpu-build"


def build(name: str, *, verbose: bool = False, check: bool = False,
          device_only: bool = False) -> Path:
    """Compile kernels/<name>.cu (wgmma_sp.cu for wgmma_sp<part>; cached); return the
    shared library's path. ``check``: CI's compile check (CHECK_FLAGS), not for a GPU;
    ``device_only``: a cubin of the device code (flags()), not a library."""
    extra = _generated_inputs(name)
    tag = ("check-" if check else "") + ("cubin-" if device_only else "")
    out_dir = build_dir() / f"{name}-{tag}{_digest(name, extra, check, device_only)}"
    lib = out_dir / (f"{name}.cubin" if device_only else f"lib{name}.so")
    if lib.exists():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    for fname, text in extra.items():
        (out_dir / fname).write_text(text)
    tmp = out_dir / f"lib{name}.so.tmp{os.getpid()}"
    cmd = [nvcc(), *flags(name, check, device_only), f"-I{INCLUDE}", f"-I{out_dir}", f"-I{KERNELS}",
           str(source(name)), "-o", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    (out_dir / "build.log").write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise BuildError(f"nvcc failed for {name}:\n{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    if verbose and (proc.stdout or proc.stderr):
        print(proc.stdout + proc.stderr, file=sys.stderr)
    tmp.replace(lib)
    return lib


def build_all(names: tuple[str, ...] = LIBS, verbose: bool = False,
              jobs: int | None = None) -> dict[str, Path]:
    with ThreadPoolExecutor(max_workers=jobs or len(names)) as pool:
        futures = {n: pool.submit(build, n, verbose=verbose) for n in names}
        return {n: f.result() for n, f in futures.items()}


if __name__ == "__main__":
    names = tuple(sys.argv[1:]) or LIBS
    for n, p in build_all(names, verbose=True).items():
        print(f"{n}: {p}")
