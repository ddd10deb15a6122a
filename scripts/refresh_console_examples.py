"""Re-run the commands of the ```console blocks of a Markdown file and put their real
output under them (issue 13: the README's examples stay true).

    python scripts/refresh_console_examples.py README.md docs/diff-policy.md [--check]

A block is a sequence of ``$ command`` lines, each followed by its output, up to the
closing fence. Commands run with bash from the repository root. ``--check`` exits 1 if
any output differs instead of rewriting. Commands that need a toolkit (``ptxgen probe``)
are left alone unless ``--probe`` is given.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```console\n(.*?)```", re.S)


def refresh(text: str, probe: bool) -> str:
    def block(m: re.Match[str]) -> str:
        out: list[str] = []
        for chunk in re.split(r"(?m)^(?=\$ )", m.group(1)):
            if not chunk.startswith("$ "):
                out.append(chunk)
                continue
            cmd = chunk.split("\n", 1)[0][2:]
            if "ptxgen probe" in cmd and not probe:
                out.append(chunk)
                continue
            proc = subprocess.run(["bash", "-c", f"{{ {cmd}; }} 2>&1"], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True, check=False)
            out.append(f"$ {cmd}\n{proc.stdout}")
        return "```console\n" + "".join(out) + "```"

    return BLOCK.sub(block, text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--probe", action="store_true")
    args = ap.parse_args()
    stale = False
    for name in args.files:
        path = ROOT / name
        old = path.read_text()
        new = refresh(old, args.probe)
        if new != old:
            stale = True
            if not args.check:
                path.write_text(new)
            print(f"{name}: {'differs' if args.check else 'refreshed'}")
    sys.exit(1 if stale and args.check else 0)


if __name__ == "__main__":
    main()
