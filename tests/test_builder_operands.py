"""Issue 12: the Python builders validate operand text. Register, predicate and vector
operands are PTX identifiers (PTX ISA 4.4: ``[a-zA-Z]{followsym}*`` or
``[_$%]{followsym}+``, followsym ``[a-zA-Z0-9_$]``); address operands an identifier with an
optional ``+offset`` / ``+-offset``. Anything else (brackets, braces, ``;``) is a
PtxFormError naming the operand.

The oracle for the boundary is ptxas 13.0: every name and address below is assembled in a
small kernel, and the builders accept exactly what ptxas accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpp import harness

from ptxgen.isa.ptx import PtxFormError, ldmatrix

REGS = ["r0", "r1", "r2", "r3"]


def load(p: str = "addr", d: list[str] | None = None) -> str:
    return ldmatrix(shape="m8n8", num="x4", ss="shared", type="b16", d=d or REGS, p=p)


def test_issue_examples_are_refused_naming_the_operand() -> None:
    with pytest.raises(PtxFormError, match=r"operand p: '\[addr\]' is not allowed "
                                           r"\(without the brackets"):
        load(p="[addr]")
    with pytest.raises(PtxFormError, match=r"operand d\[0\]: 'r0}; trap; {' is not allowed; "
                                           r"allowed: a PTX identifier"):
        load(d=["r0}; trap; {", "r1", "r2", "r3"])


NAMES = ["r0", "%r1", "%rd2", "_a", "$a", "a$b", "%_", "%$", "A9", "_", "$", "%", "9a",
         "%9", "a.b", "a-b", "r0,r1", "%r1;", "{r0}", "ab%c"]


def _assembles(tmp_path: Path, decls: str, body: str) -> bool:
    src = tmp_path / "k.ptx"
    src.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n"
                   f"{decls}\n{body}\nret;\n}}\n")
    proc = harness.run([harness.tool("ptxas"), "-arch=sm_80", str(src), "-o",
                        str(tmp_path / "k.cubin")], ok=False)
    return proc.returncode == 0


def _builds(**args: object) -> str | None:
    try:
        return ldmatrix(shape="m8n8", num="x4", ss="shared", type="b16", **args)
    except PtxFormError:
        return None


@pytest.mark.parametrize("name", NAMES)
def test_register_names_are_what_ptxas_accepts(tmp_path: Path, name: str) -> None:
    """A register name the builder takes assembles as a register; one it refuses does not
    (declared and used the same way)."""
    text = _builds(d=[name, "r1", "r2", "r3"], p="addr")
    ptxas_ok = _assembles(tmp_path, f".reg .b32 {name};\n.reg .b32 r1, r2, r3;\n"
                                    ".reg .b64 addr;\nmov.b64 addr, 0;",
                          f"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{name}, r1, r2, r3}}, "
                          "[addr];")
    assert (text is not None) == ptxas_ok, (name, text)


ADDRESSES = ["addr", "addr+16", "addr+-16", "addr+0x10", "addr+0b10000", "addr+020",
             "addr+16U", "addr-16", "addr+", "addr+1.5", "addr+a", "16", "[addr]", "addr]",
             "addr + 16", "addr+16]; trap; [addr"]


@pytest.mark.parametrize("address", ADDRESSES)
def test_addresses_are_what_ptxas_accepts(tmp_path: Path, address: str) -> None:
    text = _builds(d=REGS, p=address)
    ptxas_ok = _assembles(tmp_path, ".reg .b32 r<4>;\n.reg .b64 addr;\nmov.b64 addr, 0;",
                          f"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{r0, r1, r2, r3}}, "
                          f"[{address}];")
    if address == "addr + 16":  # ptxas allows blanks around +; the builder wants none
        assert text is None and ptxas_ok
        return
    assert (text is not None) == ptxas_ok, (address, text)
