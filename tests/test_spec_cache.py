"""The per-user cache of validated spec folders (ptxgen.cache): never a source of stale
output or of a stale verdict. Every input of the key is changed in turn (a spec file, a
schema, the generator's own sources) and the command must answer as without a cache;
what the cache serves must be exactly what loading produces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORE_INSTRUCTIONS, ROOT, SPEC, spec_subset
from ptxgen import cache, pipeline, write
from ptxgen.load import load_spec_dir

CLUSTER = "instructions/clusterlaunchcontrol.yaml"


@pytest.fixture
def spec_small(tmp_path: Path) -> Path:
    """A private copy of the core of spec/ with clusterlaunchcontrol.yaml (the file these
    tests edit): the cache's keys and entries are per file, and a whole-spec copy costs
    every validation and generation here four times as much (CI's budget)."""
    return spec_subset(tmp_path / "spec", (*CORE_INSTRUCTIONS, "clusterlaunchcontrol.yaml"))
TITLE = "request the cancellation of a cluster that has not started"


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private, empty cache folder for this test (the in-process and CLI runs)."""
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("PTXGEN_NO_CACHE", raising=False)
    return home


def _entries(home: Path) -> list[Path]:
    folder = home / "ptxgen" / pipeline.SPEC_CACHE
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) \
        if folder.is_dir() else []


def _cli(*args: str, env: dict[str, str], cwd: Path = ROOT,
         pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    if pythonpath is not None:
        full["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-m", "ptxgen", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, check=False)


def test_a_cache_hit_is_exactly_what_loading_produces(cache_home: Path) -> None:
    loaded = load_spec_dir(SPEC)
    first = pipeline.load_documents(SPEC)  # a miss: validated and stored
    assert len(_entries(cache_home)) == 1
    hit = pipeline.load_documents(SPEC)  # a hit: not parsed, not checked
    assert hit is not first
    for a, b in zip(loaded, hit, strict=True):
        assert (a.path, a.display, a.rel, a.text) == (b.path, b.display, b.rel, b.text)
        assert a.data == b.data
        assert a.source == b.source
        # the same types, not just equal values (a tuple path is not a list path)
        assert [type(k) for k in a.source.values] == [type(k) for k in b.source.values]
    assert len(loaded) == len(hit)


def test_generate_is_byte_for_byte_the_same_with_and_without_the_cache(
        cache_home: Path, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(cache_home)}
    for out in ("miss", "hit"):  # the first run stores, the second is served
        res = _cli("generate", "--out", str(tmp_path / out), env=env)
        assert res.returncode == 0, res.stderr
    assert len(_entries(cache_home)) == 1
    res = _cli("generate", "--out", str(tmp_path / "off"), env={**env, "PTXGEN_NO_CACHE": "1"})
    assert res.returncode == 0, res.stderr
    files = write.existing_files(tmp_path / "off")
    assert files == write.existing_files(tmp_path / "miss") == write.existing_files(
        tmp_path / "hit") == write.existing_files(ROOT / "generated")


def test_editing_a_spec_file_invalidates_the_entry(cache_home: Path, spec_small: Path,
                                                   tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(cache_home)}
    assert _cli("generate", "--spec", str(spec_small), "--out", str(tmp_path / "a"),
                env=env).returncode == 0
    assert _cli("validate", "--spec", str(spec_small), env=env).returncode == 0  # a hit
    path = spec_small / CLUSTER
    text = path.read_text(encoding="utf-8")
    # a valid edit: the new title reaches the generated docs
    path.write_text(text.replace(TITLE, "ask to cancel a cluster that has not started"),
                    encoding="utf-8")
    assert _cli("generate", "--spec", str(spec_small), "--out", str(tmp_path / "b"),
                env=env).returncode == 0
    header = (tmp_path / "b" / "include" / "ptxgen" / "ptx" / "clusterlaunchcontrol.device.hpp"
              ).read_text(encoding="utf-8")  # the wrappers, with their documentation
    assert "ask to cancel a cluster that has not started" in header
    assert TITLE not in header
    # an invalid edit: the same command fails at the file's line, every time
    path.write_text(text.replace("    id: clusterlaunchcontrol_try_cancel\n",
                                 "    id: Clusterlaunchcontrol_try_cancel\n"), encoding="utf-8")
    entries = _entries(cache_home)
    for _ in range(2):
        res = _cli("validate", "--spec", str(spec_small), env=env)
        assert res.returncode == 2
        assert "clusterlaunchcontrol.yaml:" in res.stderr
        assert "Clusterlaunchcontrol_try_cancel" in res.stderr
    assert _entries(cache_home) == entries  # a spec that does not validate is not stored
    # and back: the first entry is served again, with the first output
    path.write_text(text, encoding="utf-8")
    assert _cli("generate", "--spec", str(spec_small), "--out", str(tmp_path / "c"),
                env=env).returncode == 0
    assert write.existing_files(tmp_path / "c") == write.existing_files(tmp_path / "a")


def test_editing_a_schema_invalidates_the_entry(cache_home: Path, spec_small: Path) -> None:
    env = {"XDG_CACHE_HOME": str(cache_home)}
    assert _cli("validate", "--spec", str(spec_small), env=env).returncode == 0
    assert _entries(cache_home)
    schema = spec_small / "schema" / "instructions.schema.json"
    text = schema.read_text(encoding="utf-8")
    assert '"title": {' in text
    # file titles may be at most 10 characters now: every instruction file breaks the schema
    schema.write_text(text.replace('"title": {', '"title": {"maxLength": 10, ', 1),
                      encoding="utf-8")
    res = _cli("validate", "--spec", str(spec_small), env=env)
    assert res.returncode == 2
    assert "clusterlaunchcontrol.yaml:" in res.stderr and "is too long" in res.stderr


def test_changing_the_generator_invalidates_the_entry(cache_home: Path, spec_small: Path,
                                                      tmp_path: Path) -> None:
    """The generator's sources are in the key: a copy of the package whose model checks
    find a problem must report it, although the same spec validated (and was cached) with
    the original package."""
    env = {"XDG_CACHE_HOME": str(cache_home)}
    pkg = tmp_path / "pkgroot" / "ptxgen"
    shutil.copytree(ROOT / "generator", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "generated" / "python", pkg / "isa",
                    ignore=shutil.ignore_patterns("__pycache__"))
    res = _cli("validate", "--spec", str(spec_small), env=env, pythonpath=pkg.parent)
    assert res.returncode == 0, res.stderr
    assert len(_entries(cache_home)) == 1
    assert _cli("validate", "--spec", str(spec_small), env=env,
                pythonpath=pkg.parent).returncode == 0  # served from the cache
    checks = pkg / "model" / "checks.py"
    checks.write_text(checks.read_text(encoding="utf-8") + '''

_original_check_model = check_model


def check_model(validated: Validated) -> list[Diagnostic]:  # noqa: F811
    return [*_original_check_model(validated), Diagnostic("x.yaml", 1, 1, "changed checks")]
''', encoding="utf-8")
    res = _cli("validate", "--spec", str(spec_small), env=env, pythonpath=pkg.parent)
    assert res.returncode == 2, res.stdout
    assert "x.yaml:1:1: changed checks" in res.stderr


def test_a_damaged_entry_is_ignored(cache_home: Path, spec_small: Path) -> None:
    first = pipeline.load_documents(spec_small)
    (entry,) = _entries(cache_home)
    entry.write_bytes(entry.read_bytes()[:1000])  # truncated
    again = pipeline.load_documents(spec_small)
    assert [d.data for d in again] == [d.data for d in first]
    entry.write_bytes(b"not marshal data")
    assert [d.data for d in pipeline.load_documents(spec_small)] == [d.data for d in first]


def test_no_cache_stores_nothing(cache_home: Path, spec_small: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXGEN_NO_CACHE", "1")
    assert pipeline.load_documents(spec_small)
    monkeypatch.delenv("PTXGEN_NO_CACHE")
    assert pipeline.load_documents(spec_small, use_cache=False)
    assert _entries(cache_home) == []


def test_only_the_newest_entries_are_kept(cache_home: Path, spec_core: Path) -> None:
    """(On the core of the spec, conftest.spec_core: eleven validations of the whole spec
    would be most of this file's time; the cache does not care what the spec holds.)"""
    path = spec_core / "instructions" / "ldmatrix.yaml"
    text = path.read_text(encoding="utf-8")
    for n in range(cache.KEEP + 3):
        path.write_text(text + f"# edit {n}\n", encoding="utf-8")
        pipeline.load_documents(spec_core)
    assert len(_entries(cache_home)) == cache.KEEP
