"""Generation: deterministic, atomic, self-describing, and `check` exact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, SPEC, run_cli
from ptxgen import pipeline, write
from ptxgen.emit import render_all
from ptxgen.errors import SpecError

GENERATED = ROOT / "generated"


def test_committed_output_is_up_to_date() -> None:
    assert pipeline.check(SPEC, GENERATED, full=True) == []
    res = run_cli("check")
    assert (res.code, res.out) == (0, "")


def test_output_is_byte_for_byte_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    pipeline.generate(SPEC, a)
    pipeline.generate(SPEC, b)
    fa, fb = write.existing_files(a), write.existing_files(b)
    assert fa == fb
    assert fa == write.existing_files(GENERATED)
    assert pipeline.render(SPEC) == pipeline.render(SPEC)


def test_every_generated_file_names_its_spec_and_says_do_not_edit() -> None:
    files = pipeline.render(SPEC)
    assert files
    # the notice lists every spec file it comes from: the head is the longest such list
    # (every spec file, wrapped, with comment markers) and the two sentences around it
    sources = sorted(p for p in SPEC.rglob("*") if p.suffix in (".yaml", ".json"))
    window = 600 + sum(len(f"spec/{p.relative_to(SPEC).as_posix()}, ") + 3 for p in sources)
    for rel, data in files.items():
        if rel.endswith("py.typed"):
            assert data == b""
            continue
        head = data[:window].decode(errors="ignore")
        assert "Do not edit" in head or "do not edit" in head, rel
        assert "spec/" in head or "no spec input" in head or rel.endswith("MANIFEST.json"), rel


def test_check_reports_changed_missing_and_extra(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    (out / "docs" / "README.md").write_text("edited\n")
    (out / "python" / "smem_desc.py").unlink()
    (out / "stray.txt").write_text("x")
    for extra in ([], ["--full"]):
        res = run_cli("check", "--out", str(out), *extra)
        assert res.code == 1, res.err
        assert sorted(res.out.splitlines()) == sorted([
            f"{out.as_posix()}/docs/README.md: changed",
            f"{out.as_posix()}/python/smem_desc.py: missing",
            f"{out.as_posix()}/stray.txt: extra",
        ])
    res = run_cli("check", "--out", str(out), "--json")
    payload = json.loads(res.out)
    assert payload["ok"] is False and len(payload["differences"]) == 3


def test_check_renders_in_full_when_the_spec_changed(tmp_path: Path, spec_core: Path) -> None:
    out = tmp_path / "generated"
    pipeline.generate(spec_core, out)
    assert pipeline.check(spec_core, out) == []
    path = spec_core / "descriptors" / "smem_desc.yaml"
    path.write_text(path.read_text().replace("description: Matrix base offset",
                                             "description: Matrix base offset (edited)"))
    diffs = dict((p, s) for s, p in pipeline.check(spec_core, out))
    assert diffs.get("docs/smem_desc.md") == "changed"
    assert diffs.get("python/smem_desc.py") == "changed"


def test_another_jinja_release_is_up_to_date_when_the_bytes_are(tmp_path: Path) -> None:
    """The manifest's input digest names the Jinja2 release; a newer one (CI installs the
    newest) makes a full render, and identical bytes are up to date, while an edited file
    is still a difference."""
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    path = out / "MANIFEST.json"
    data = json.loads(path.read_text())
    data["inputs"] = "0" * 64  # as a manifest written with another Jinja2 release
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    assert pipeline.check(SPEC, out) == []
    res = run_cli("check", "--out", str(out))
    assert (res.code, res.out) == (0, "")
    (out / "docs" / "README.md").write_text("edited\n")
    assert sorted(pipeline.check(SPEC, out)) == [("changed", "MANIFEST.json"),
                                                 ("changed", "docs/README.md")]


def test_refused_spec_writes_nothing(tmp_path: Path, spec_core: Path) -> None:
    out = tmp_path / "generated"
    pipeline.generate(spec_core, out)
    before = write.existing_files(out)
    path = spec_core / "descriptors" / "smem_desc.yaml"
    path.write_text(path.read_text().replace("word_bits: 64", "word_bits: 48"))
    with pytest.raises(SpecError):
        pipeline.generate(spec_core, out)
    assert write.existing_files(out) == before


def test_a_failure_while_writing_leaves_the_old_output(tmp_path: Path, spec_core: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "generated"
    pipeline.generate(spec_core, out)
    before = write.existing_files(out)
    files = dict(render_all(pipeline.load_model(spec_core)))
    real_write_bytes = Path.write_bytes
    calls = {"n": 0}

    def flaky(self: Path, data: bytes) -> int:  # fail half-way through
        calls["n"] += 1
        if calls["n"] == len(files) // 2:
            raise OSError("disk full")
        return real_write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", flaky)
    with pytest.raises(OSError, match="disk full"):
        write.write_tree(out, {**files, "new.txt": b"new"})
    monkeypatch.undo()
    assert write.existing_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated", "spec"]  # no temp folders


def test_generate_replaces_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    out.mkdir()
    (out / "stale.py").write_text("old")  # written by an earlier generate (its manifest says so)
    from ptxgen import manifest

    (out / manifest.NAME).write_bytes(manifest.build({"stale.py": b"old"}, "digest"))
    res = run_cli("generate", "--out", str(out), "--json")
    assert res.code == 0, res.err
    assert not (out / "stale.py").exists()
    assert sorted(json.loads(res.out)["files"]) == sorted(write.existing_files(out))


def test_an_output_that_is_already_exact_is_left_alone(tmp_path: Path) -> None:
    """Writing the files a folder already holds (paths, bytes, permissions) touches
    nothing: the same folder, the same modification times. A file that differs in its
    bytes or its permissions, or one more file, and the folder is replaced as a whole."""
    import os

    from ptxgen import manifest

    files = {"a.txt": b"one\n", "sub/b.hpp": b"two\n", "sub/deeper/c.py": b"three\n"}
    files[manifest.NAME] = manifest.build(files, "digest")
    out = tmp_path / "out"
    write.write_tree(out, files)

    def state() -> tuple[int, dict[str, int]]:
        return os.stat(out).st_ino, {rel: os.stat(out / rel).st_mtime_ns for rel in files}

    before = state()
    write.write_tree(out, files)
    assert state() == before
    assert write.existing_files(out) == files

    (out / "sub" / "b.hpp").write_bytes(b"TWO\n")  # edited by hand: written again
    write.write_tree(out, files)
    assert write.existing_files(out) == files and state()[0] != before[0]

    after = state()
    os.chmod(out / "a.txt", 0o600)  # other permissions: written again
    write.write_tree(out, files)
    assert os.stat(out / "a.txt").st_mode & 0o777 == os.stat(out / "sub" / "b.hpp").st_mode & 0o777
    assert state()[0] != after[0]

    more = {**files, "d.txt": b"four\n"}  # one more file: the folder is replaced
    more[manifest.NAME] = manifest.build({k: v for k, v in more.items() if k != manifest.NAME},
                                         "digest")
    write.write_tree(out, more)
    assert write.existing_files(out) == more
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folders left
