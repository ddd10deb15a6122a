"""A synthetic spec with K times today's instruction forms, for scaling benchmarks.

    python benchmarks/synthetic_spec.py OUT_SPEC_DIR [--copies 3]

Copies spec/ to OUT_SPEC_DIR and repeats every instruction spec file K - 1 more times under
new names: instruction ``wgmma.mma_async.sync.aligned`` (id ``wgmma_mma_async``, wrapper
``wgmma_mma_async``) becomes ``wgmmac2.mma_async.sync.aligned`` (``wgmma_mma_async_c2``) in
``wgmma_c2.yaml``, and so on. The copies are new instruction families with the same forms,
qualifiers, gates and wrappers, so `ptxgen generate --spec OUT_SPEC_DIR` writes K times
the wrappers (one header per copy), which is what issue 14 measures headers against
(``bench_cpp_compile.py --include``).
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_text(text: str, k: int) -> str:
    """One instruction spec file's text under the names of copy k."""
    bases = sorted({m.group(1).split(".")[0].split("::")[0]
                    for m in re.finditer(r"^  - name: (\S+)", text, re.M)}, key=len, reverse=True)
    ids = re.findall(r"^    id: (\w+)", text, re.M)
    wrappers = re.findall(r"\{name: (\w+), when:", text)
    for base in bases:  # opcodes and PTX text: wgmma.mma_async -> wgmmac2.mma_async
        text = re.sub(rf"(?<![\w.]){re.escape(base)}(?=\.|::|{{)", f"{base}c{k}", text)
        # an opcode of one word (fence, membar): its name line
        text = re.sub(rf"^(  - name: ){re.escape(base)}$", rf"\g<1>{base}c{k}", text,
                      flags=re.M)
    for name in sorted(set(ids) | set(wrappers), key=len, reverse=True):
        text = re.sub(rf"(?<=^    id: ){name}$|(?<=\{{name: ){name}(?=, when:)", f"{name}_c{k}",
                      text, flags=re.M)
    for name in sorted(ids, key=len, reverse=True):  # proposals: instruction:ID:...
        text = re.sub(rf"(?<=instruction:){name}(?=:)", f"{name}_c{k}", text)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--spec", type=Path, default=ROOT / "spec")
    args = ap.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    shutil.copytree(args.spec, args.out)
    for path in sorted((args.out / "instructions").glob("*.yaml")):
        text = path.read_text()
        for k in range(2, args.copies + 1):
            (path.parent / f"{path.stem}_c{k}.yaml").write_text(copy_text(text, k))
    print(f"wrote {args.out} ({args.copies}x the instruction files)")


if __name__ == "__main__":
    main()
