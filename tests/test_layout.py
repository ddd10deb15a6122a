"""The package's layout shows the pipeline: every module imports only modules of its own
stage or of earlier ones (load -> validate -> model -> emit -> write; the pipeline
functions, the model's consumers and the command line on top), and no import cycle
exists, not even one through an import made only for type checking or inside a
function. The imports are read from the source with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "generator"

# The stages in pipeline order: a module may import modules of its own stage or of an
# earlier one. Keys are module names below ``ptxgen`` (a package stands for all of its
# modules); every module of the package must be in exactly one stage.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("errors", "names", "escape", "spec_util", "source")),
    ("load", ("load", "cache")),
    ("validate", ("validate",)),
    ("model", ("model",)),
    ("emit", ("emit",)),
    ("write", ("write", "manifest")),
    ("pipeline", ("pipeline",)),
    ("consumers", ("support", "diff", "probe", "doc", "lint", "scan")),
    ("cli", ("cli", "__main__")),
)
# Consumers of the model stand side by side: none imports another.
SIDE_BY_SIDE = ("support", "diff", "probe", "doc", "lint", "scan")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["ptxgen", *parts])


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in p.parts}


def imports(name: str, path: Path) -> set[str]:
    """Every ``ptxgen`` module ``path`` imports, wherever the import statement stands."""
    out: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = modules()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "ptxgen")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if base.split(".")[0] != "ptxgen":
                continue
            for a in node.names:  # `from ptxgen.model import instructions` imports a module
                sub = f"{base}.{a.name}"
                out.add(sub if sub in known else base)
    out.discard(name)
    return {m for m in out if not m.startswith("ptxgen.isa")}  # the generated package


def stage_of(name: str) -> int:
    parts = name.split(".")[1:]
    top = parts[0] if parts else ""
    for i, (_, members) in enumerate(STAGES):
        if top in members:
            return i
    raise AssertionError(f"{name} is in no stage of tests/test_layout.py")


def test_every_module_is_in_a_stage() -> None:
    found = {name: stage_of(name) for name in modules() if name != "ptxgen"}
    assert found


@pytest.mark.parametrize("name", sorted(m for m in modules() if m != "ptxgen"))
def test_a_module_imports_only_its_stage_and_earlier_ones(name: str) -> None:
    path = modules()[name]
    mine = stage_of(name)
    later = sorted(f"{m} ({STAGES[stage_of(m)][0]})" for m in imports(name, path)
                   if m != "ptxgen" and stage_of(m) > mine)
    assert not later, f"{name} ({STAGES[mine][0]}) imports later stages: {', '.join(later)}"
    top = name.split(".")[1]
    others = sorted(m for m in imports(name, path) if m != "ptxgen"
                    and m.split(".")[1] in SIDE_BY_SIDE and m.split(".")[1] != top)
    assert top not in SIDE_BY_SIDE or not others, \
        f"{name} imports another consumer of the model: {', '.join(others)}"


def test_no_import_cycles() -> None:
    graph = {name: imports(name, path) for name, path in modules().items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_what_it_must_refuse(tmp_path: Path) -> None:
    """The import reader finds imports inside functions and under TYPE_CHECKING, and
    resolves relative ones, so a cycle cannot hide there."""
    src = tmp_path / "x.py"
    src.write_text("from typing import TYPE_CHECKING\n"
                   "if TYPE_CHECKING:\n    from ptxgen.emit import Files\n"
                   "def f():\n    from ptxgen import pipeline\n    import ptxgen.cli\n"
                   "from .instructions import Form\n")
    got = imports("ptxgen.model.x", src)
    assert got == {"ptxgen.emit", "ptxgen.pipeline", "ptxgen.cli", "ptxgen.model.instructions"}
    assert max(stage_of(m) for m in got) > stage_of("ptxgen.model.x")
