"""The two sides of a diff: a spec folder, or the spec folder of a git revision.

A git revision (``HEAD~3``, a tag, a commit; ``REV:PATH`` names another folder
inside it) is exported with ``git archive`` into a temporary folder and loaded
from there like any folder, with the schemas it carries. Every location a diff
reports is written as the user can find it: ``FOLDER/descriptors/x.yaml:12`` for
a folder, ``REV:spec/descriptors/x.yaml:12`` for a revision.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ptxgen.diff.base import DiffError, Json, Location
from ptxgen.errors import Diagnostic, SpecError
from ptxgen.load import Document, Path_
from ptxgen.model import Spec
from ptxgen.model.descriptors import Source
from ptxgen.spec_util import value_sets_for_kind

_SPEC_PREFIX = "spec/"  # how the loader names spec files (Document.rel, Source.file)


@dataclass
class Revision:
    """One side of a diff: the model of a spec and the documents it was built from."""

    label: str  # as the user wrote it
    type: str  # "folder" | "git"
    spec_dir: str  # the folder as shown: a path, or the path inside the git revision
    commit: str | None
    spec: Spec
    docs: dict[str, Document]  # by Document.rel; a view's are the whole spec's files
    _entries: dict[str, dict[int, Path_]] = field(default_factory=dict, repr=False)
    ptx_isa: str | None = None  # a PTX ISA version view of the spec (--ptx-isa)
    base: Spec | None = None  # the whole spec a view was made from

    @property
    def whole(self) -> Spec:
        """The whole spec (for a view: the spec it is a view of)."""
        return self.base if self.base is not None else self.spec

    def describe(self) -> dict[str, Json]:
        return {"label": self.label, "type": self.type, "spec": self.spec_dir,
                "commit": self.commit, "ptx_isa": self.ptx_isa}

    def file(self, rel: str) -> str:
        """The file of a spec element as the user finds it."""
        tail = rel[len(_SPEC_PREFIX):] if rel.startswith(_SPEC_PREFIX) else rel
        return f"{self.spec_dir.rstrip('/')}/{tail}"

    def at(self, rel: str, path: Path_ = ()) -> Location:
        """The location of the data at ``path`` of spec file ``rel``."""
        doc = self.docs.get(rel)
        line = doc.source.locate(path)[0] if doc else 1
        return Location(self.file(rel), line, self.commit and self.label)

    def loc(self, source: Source, sub: Path_ = ()) -> Location:
        """The location of a model element, or of ``sub`` (a data path) inside it."""
        if not sub:
            return Location(self.file(source.file), source.line, self.commit and self.label)
        path = self.entry_path(source)
        if path is None:
            return self.loc(source)
        return self.at(source.file, path + sub)

    def value_loc(self, source: Source, kind: str | None, index: int | None = None) -> Location:
        """The location of a field's value set for ``kind`` (or of its ``index``-th value)."""
        path = self.entry_path(source)
        if path is None:
            return self.loc(source)
        entry = self.data(source.file, path)
        if not isinstance(entry, dict):
            return self.loc(source)
        _, sub = value_sets_for_kind(entry, kind or "")
        return self.at(source.file, path + sub + ((index,) if index is not None else ()))

    def data(self, rel: str, path: Path_) -> Any:
        node: Any = self.docs[rel].data
        for key in path:
            node = node[key]
        return node

    def entry_path(self, source: Source) -> Path_ | None:
        """The data path of the sequence item (a field, a note, ...) that starts at the
        line of ``source``."""
        doc = self.docs.get(source.file)
        if doc is None:
            return None
        index = self._entries.get(source.file)
        if index is None:
            index = {}
            for path, (line, _) in doc.source.values.items():
                if path and isinstance(path[-1], int):
                    have = index.get(line)
                    if have is None or len(path) < len(have):
                        index[line] = path
            self._entries[source.file] = index
        return index.get(source.line)


def load_revision(spec_root: Path, *, label: str, type_: str, spec_dir: str,
                  commit: str | None = None) -> Revision:
    """Load, validate and model the spec folder ``spec_root``."""
    from ptxgen.load import load_spec_dir
    from ptxgen.pipeline import load_model

    try:
        # a git revision is extracted to a new temporary folder every time: not cached
        spec = load_model(spec_root, use_cache=type_ != "git")
    except SpecError as exc:
        if type_ != "git":
            raise
        raise SpecError([_relabel(d, spec_root, f"{label}:{spec_dir}")
                         for d in exc.diagnostics]) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DiffError(f"{label}: the spec validates but its model cannot be built "
                        f"({type(exc).__name__}: {exc})") from None
    docs = load_spec_dir(spec_root)  # again, for the positions of every element
    return Revision(label, type_, spec_dir, commit, spec, {d.rel: d for d in docs})


def load_views(spec_root: Path, old: str, new: str) -> tuple[Revision, Revision]:
    """The views of one spec folder as of PTX ISA versions ``old`` and ``new``: their
    models (:func:`ptxgen.model.versions.at`), located in the spec's own files."""
    from ptxgen.model import build_model
    from ptxgen.model.versions import ViewError, at, spec_versions
    from ptxgen.pipeline import load_documents

    if not spec_root.is_dir():
        raise DiffError(f"--spec: {spec_root} is not a spec folder")
    docs = load_documents(spec_root)
    whole = build_model(docs)
    out = []
    for role, version in (("OLD", old), ("NEW", new)):
        try:
            view = at(whole, version)
        except ViewError as exc:
            if version not in spec_versions(whole):
                raise DiffError(f"{role}: {exc}") from None
            raise DiffError(f"{role}: the PTX ISA {version} view cannot be made: "
                            f"{exc}") from None
        out.append(Revision(version, "folder", spec_root.as_posix(), None, view,
                            {d.rel: d for d in docs}, ptx_isa=version, base=whole))
    return out[0], out[1]


def _relabel(d: Diagnostic, root: Path, shown: str) -> Diagnostic:
    try:
        rel = Path(d.file).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return d
    return Diagnostic(f"{shown.rstrip('/')}/{rel}", d.line, d.col, d.message)


# -- opening OLD / NEW -----------------------------------------------------------------

def open_revision(arg: str, *, role: str, spec: Path, workdir: Path) -> Revision:
    """``arg`` as a spec folder if there is one, else as a git revision (``REV`` or
    ``REV:PATH``) of the repository around the current folder, whose spec folder is
    ``spec`` (the working tree's spec folder, as a path inside the repository) unless
    ``PATH`` is given. Revisions are exported below ``workdir``."""
    folder = Path(arg)
    if folder.is_dir():
        return load_revision(folder, label=arg, type_="folder", spec_dir=folder.as_posix())
    top = _git_toplevel()
    if top is None:
        raise DiffError(f"{role}: {arg!r} is not a spec folder (and the current folder is "
                            "not in a git repository, so it is not a git revision either)")
    rev, sep, path = arg.partition(":")
    if sep:
        inside = PurePosixPath(path.strip("/") or ".").as_posix()
    else:
        try:
            inside = spec.resolve().relative_to(top).as_posix()
        except ValueError:
            raise DiffError(f"{role}: --spec {spec} is outside the git repository {top}, "
                                f"so its folder in revision {arg!r} is unknown; write "
                                f"{arg}:PATH") from None
    commit = _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if commit is None:
        raise DiffError(f"{role}: {arg!r} is neither a spec folder nor a git revision")
    if _git(top, "cat-file", "-t", f"{commit}:{inside}") != "tree":
        raise DiffError(f"{role}: revision {rev} has no folder {inside!r}")
    dest = workdir / role.lower()
    _export(top, commit, inside, dest)
    return load_revision(dest / inside, label=rev, type_="git", spec_dir=inside, commit=commit)


def _git_toplevel() -> Path | None:
    out = _git(Path.cwd(), "rev-parse", "--show-toplevel")
    return Path(out).resolve() if out else None


def _git(cwd: Path, *args: str) -> str | None:
    """A git command's stdout (stripped), or None when it fails or git is missing."""
    try:
        res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                             check=False)
    except OSError:
        return None
    return res.stdout.strip() if res.returncode == 0 else None


#: A revision's spec folder may hold at most this much (every file is also limited by
#: the loader, :data:`ptxgen.load.MAX_FILE_BYTES`): a revision is someone else's input.
MAX_REVISION_BYTES = 64 * 1024 * 1024


def _check_sizes(top: Path, commit: str, inside: str) -> None:
    """Refuse a revision whose spec folder is too large before it is exported."""
    from ptxgen.load import MAX_FILE_BYTES

    listing = _git(top, "ls-tree", "-r", "-l", "-z", commit, "--", inside)
    total = 0
    for entry in (listing or "").split("\0"):
        meta, _, name = entry.partition("\t")
        parts = meta.split()
        if len(parts) != 4 or parts[1] != "blob" or not parts[3].isdigit():
            continue
        size = int(parts[3])
        total += size
        if size > MAX_FILE_BYTES and name.endswith((".yaml", ".yml", ".json")):
            raise DiffError(f"{commit[:12]}:{name}: {size} bytes; spec files are limited to "
                            f"{MAX_FILE_BYTES} bytes")
    if total > MAX_REVISION_BYTES:
        raise DiffError(f"{commit[:12]}:{inside}: {total} bytes; a spec folder is limited to "
                        f"{MAX_REVISION_BYTES} bytes")


def _export(top: Path, commit: str, inside: str, dest: Path) -> None:
    """Write the files of ``commit:inside`` below ``dest`` (regular files only)."""
    _check_sizes(top, commit, inside)
    try:
        res = subprocess.run(["git", "archive", "--format=tar", commit, "--", inside],
                             cwd=top, capture_output=True, check=False)
    except OSError as exc:
        raise DiffError(f"git archive failed: {exc}") from None
    if res.returncode != 0:
        msg = res.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffError(f"git archive {commit} -- {inside} failed: "
                            f"{msg[-1] if msg else 'no output'}")
    with tarfile.open(fileobj=io.BytesIO(res.stdout), mode="r:") as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or member.name.startswith("/") or ".." in parts:
                continue
            data = tar.extractfile(member)
            if data is None:
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.read())
