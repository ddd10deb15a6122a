"""Stage 5 - write: the output folder is replaced as a whole, never half-written.

All files are written into a fresh temporary folder next to the output
folder; only when every file is on disk is the old folder renamed away and the
new one renamed into place (both renames are atomic on POSIX). If anything
fails before the swap, the previous output is untouched and the temporary
folder is removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
                          ".hypothesis"})


def write_tree(out_dir: Path, files: dict[str, bytes]) -> None:
    out_dir = out_dir.resolve()
    parent = out_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.new-", dir=parent))
    try:
        for rel, data in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.chmod(tmp, 0o755)
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=parent))
            old.rmdir()
            os.rename(out_dir, old)
            try:
                os.rename(tmp, out_dir)
            except BaseException:
                os.rename(old, out_dir)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def existing_files(out_dir: Path) -> dict[str, bytes]:
    """Files currently in ``out_dir`` (caches such as __pycache__ ignored)."""
    found: dict[str, bytes] = {}
    if not out_dir.is_dir():
        return found
    for root, dirs, names in os.walk(out_dir):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in names:
            if name.endswith((".pyc", ".pyo")):
                continue
            p = Path(root) / name
            found[p.relative_to(out_dir).as_posix()] = p.read_bytes()
    return found


def diff_tree(out_dir: Path, files: dict[str, bytes]) -> list[tuple[str, str]]:
    """(status, path) for every file that differs: changed, missing or extra."""
    have = existing_files(out_dir)
    out: list[tuple[str, str]] = []
    for rel in sorted(set(have) | set(files)):
        if rel not in have:
            out.append(("missing", rel))
        elif rel not in files:
            out.append(("extra", rel))
        elif have[rel] != files[rel]:
            out.append(("changed", rel))
    return out
