"""``ptxgen scan`` over a tree of 1,000 generated CUDA sources (the target: <= 10 s on 2
cores). Each file holds 8 asm blocks (a mix of the spec's forms in other spellings,
glue and opcodes the spec lacks), #if branches and ordinary C++ around them.

    python benchmarks/bench_scan.py [--files N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCKS = [
    'asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\\n"\n'
    '             : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(p));',
    'asm volatile("{\\n.reg .pred P1;\\nW%=:\\n'
    'mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\\n@P1 bra D%=;\\nbra W%=;\\n'
    'D%=:\\n}\\n" :: "r"(bar), "r"(ph));',
    '#if __CUDA_ARCH__ >= 900\n  asm volatile("bar.sync %0, %1;" :: "r"(i), "r"(n));\n'
    '#else\n  asm volatile("barrier.sync.aligned %0, %1;" :: "r"(i), "r"(n));\n#endif',
    'asm volatile("fence.proxy.async.shared::cta;" "\\n" "wgmma.fence.sync.aligned;"'
    ' ::: "memory");',
    'asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));',
    'asm volatile("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8.satfinite '
    '{%0}, %1, %2, p;" : "+r"(x) : "l"(a), "l"(b));',
    'asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), '
    '"=r"(c), "=r"(d) : "l"(p));',
    'asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");',
]


def write_tree(root: Path, files: int) -> None:
    for i in range(files):
        sub = root / f"dir{i % 20}"
        sub.mkdir(exist_ok=True)
        body = "\n".join(f"__device__ void f{i}_{k}(unsigned a, unsigned b, unsigned c, "
                         f"unsigned d, unsigned p) {{\n  // code around\n  {blk}\n}}\n"
                         for k, blk in enumerate(BLOCKS))
        filler = "\n".join(f"static int g{i}_{k} = {k};  // ordinary C++" for k in range(200))
        (sub / f"k{i}.cu").write_text(f"#include <cstdint>\n{filler}\n{body}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(Path(tmp), args.files)
        t = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "ptxgen", "scan", tmp],
                             capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t
    print(res.stdout.splitlines()[0] if res.stdout else res.stderr)
    print(f"scan of {args.files} files: {wall:.2f} s (target <= 10 s on 2 cores)")


if __name__ == "__main__":
    main()
