"""tcgen05_wait_ld(r): the wait::ld, then the registers tcgen05.ld wrote tied to it (spec
wrapper ``fences``), so that no use of them is scheduled above the wait.

Oracles: nvcc 13.0 (the PTX of a kernel: every read of a loaded register comes after the
wait; a register count tcgen05.ld never writes fails to compile, naming the counts) and
ptxas 13.0 / 13.5 (the PTX assembles)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import toolkits

INCLUDE = Path(__file__).resolve().parent.parent / "generated" / "include"

KERNEL = r"""
#include <ptxgen/ptx/tcgen05_tmem.hpp>
using namespace ptxgen::ptx;
__global__ void k(unsigned* out, unsigned taddr) {
  std::uint32_t r[COUNT];
  tcgen05_ld<tcgen05_ld_shape::shape_32x32b, COUNT>(r, taddr);
  WAIT;
#pragma unroll
  for (int i = 0; i < COUNT; ++i) out[i * 33] = r[i] * 3u + 1u;
}
"""


def _ptx(tmp_path: Path, count: int, wait: str, ok: bool = True) -> str:
    nvcc = toolkits.require("nvcc", "13.0")
    src = tmp_path / "k.cu"
    src.write_text(KERNEL.replace("COUNT", str(count)).replace("WAIT", wait))
    proc = subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}",
                           str(src), "-o", str(tmp_path / "k.ptx")],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
    return (tmp_path / "k.ptx").read_text() if ok else proc.stdout + proc.stderr


def _lines(ptx: str) -> list[str]:
    body = ptx[ptx.index(".entry"):]
    return [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip()
            .startswith(("//", "."))]


def test_no_use_of_the_registers_above_the_wait(tmp_path: Path) -> None:
    lines = _lines(_ptx(tmp_path, 32, "tcgen05_wait_ld(r)"))
    ld = next(i for i, ln in enumerate(lines) if ln.startswith("tcgen05.ld."))
    wait = next(i for i, ln in enumerate(lines) if ln.startswith("tcgen05.wait::ld"))
    regs = re.search(r"\{([^}]*)\}", lines[ld])
    assert regs is not None and ld < wait
    loaded = {r.strip() for r in regs.group(1).split(",")}
    assert len(loaded) == 32
    between = lines[ld + 1:wait]
    for ln in between:  # nothing between the load and the wait reads a loaded register
        operands = re.findall(r"%r\d+", ln.split(None, 1)[-1])
        assert not loaded & set(operands[1:] if not ln.startswith("st.") else operands), ln
    # every loaded register is read after the wait (the stores of r[i] * 3 + 1)
    after = " ".join(lines[wait + 1:])
    assert all(re.search(rf"{re.escape(r)}\b", after) for r in loaded)


def test_the_same_ptx_as_wait_then_fence_operand(tmp_path: Path) -> None:
    mine = _lines(_ptx(tmp_path, 16, "tcgen05_wait_ld(r)"))
    hand = _lines(_ptx(tmp_path, 16, "tcgen05_wait_ld(); fence_operand(r)"))
    assert mine == hand
    for ptxas in toolkits.all_ptxas():
        _ptx(tmp_path, 16, "tcgen05_wait_ld(r)")
        rc, out = toolkits.assemble_file(ptxas, tmp_path / "k.ptx", "sm_100a")
        assert rc == 0, (ptxas, out)


def test_a_count_tcgen05_ld_never_writes_is_refused(tmp_path: Path) -> None:
    nvcc = toolkits.require("nvcc", "13.0")
    src = tmp_path / "bad.cu"
    src.write_text("#include <ptxgen/ptx/tcgen05_tmem.hpp>\nusing namespace ptxgen::ptx;\n"
                   "__global__ void k(unsigned* out) {\n  std::uint32_t r[3] = {};\n"
                   "  tcgen05_wait_ld(r);\n  out[0] = r[0];\n}\n")
    proc = subprocess.run([nvcc, "-std=c++17", "-arch=sm_100a", "-ptx", f"-I{INCLUDE}",
                           str(src), "-o", str(tmp_path / "bad.ptx")],
                          capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ('static assertion failed with "ptxgen: tcgen05.wait: the array r has PtxgenN '
            'registers where tcgen05.ld.sync.aligned writes 1, 2, 4, 8, 16, 32, 64 or 128"'
            in out), out
    assert "PtxgenN=3" in out, out


def test_fences_must_name_a_register_array_an_instruction_writes(spec_copy: Path) -> None:
    from test_validate import edit, errors

    rel = "instructions/tcgen05_tmem.yaml"
    edit(spec_copy, rel, "fences: {instruction: tcgen05_ld, operand: r}",
         "fences: {instruction: tcgen05_ldd, operand: r}")
    edit(spec_copy, rel, "{name: tcgen05_wait_st, when: {op: st, sync_aligned: sync.aligned}}",
         "{name: tcgen05_wait_st, when: {op: st, sync_aligned: sync.aligned}, "
         "fences: {instruction: tcgen05_ld, operand: taddr}}")
    text = (spec_copy / rel).read_text().splitlines()
    l1 = next(i for i, ln in enumerate(text, 1) if "tcgen05_ldd" in ln)
    l2 = next(i for i, ln in enumerate(text, 1) if "operand: taddr}" in ln)
    c1 = text[l1 - 1].index("tcgen05_ldd") + 1
    c2 = text[l2 - 1].index("taddr}") + 1
    errs = errors(spec_copy)
    assert any(e.endswith(f"{rel}:{l1}:{c1}: no instruction 'tcgen05_ldd' in the spec")
               for e in errs), errs
    assert any(e.endswith(f"{rel}:{l2}:{c2}: 'taddr' is not a b32 register array that "
                          "tcgen05.ld.sync.aligned writes") for e in errs), errs
