"""The hostile corpus (issue 12): broken specs, hostile values and hostile paths, each with
the exit code and the one message ptxgen must answer with - never a traceback - and the
guarantee that a refusal writes nothing and that nothing outside the output folder is
ever touched.

Every case runs the command line (``ptxgen.cli.main``, in this process: conftest.run_main;
the Ctrl-C, SIGTERM and SIGKILL cases and the memory limit start real ``python -m ptxgen``
processes) in a private project: a copy
of the descriptor tables (``spec/descriptors``, ``spec/schema``) in a git repository, with
some files of its own (``my.txt``, ``kernels/my_kernel.cu``). The whole project is
snapshotted (paths, kinds, bytes, modes) before and after each command.

Case files: ``tests/hostile/specs/`` (one per entry; ``demo.yaml.in`` is the template of
the name cases); binary and large cases are made below.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT, SPEC, Result, run_cli, run_main

HERE = Path(__file__).resolve().parent
CASES = HERE / "specs"


# -- the private project and its snapshot ------------------------------------------------

def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SPEC / "descriptors", root / "spec" / "descriptors")
    shutil.copytree(SPEC / "schema", root / "spec" / "schema")
    (root / "my.txt").write_text("mine\n")
    (root / "kernels").mkdir()
    (root / "kernels" / "my_kernel.cu").write_text("__global__ void k() {}\n")
    (root / "afile").write_text("a regular file\n")
    (root / "sub").mkdir()
    (root / "sub" / "keep.txt").write_text("keep\n")
    _git(root, "init", "-q")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


def snapshot(root: Path) -> dict[str, tuple[str, str, int]]:
    """Every path below ``root`` (``.git`` included): kind, content hash, mode."""
    out: dict[str, tuple[str, str, int]] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = p.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "", st.st_mode)
            else:
                out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mode)
    return out


def no_traceback(res: Result) -> None:
    assert "Traceback" not in res.err and "Traceback" not in res.out, res.err


def one_line(res: Result, code: int = 2) -> str:
    """Exit ``code``, nothing on stdout, exactly one line on stderr."""
    no_traceback(res)
    assert res.code == code, (res.code, res.out, res.err)
    assert res.out == ""
    lines = res.err.splitlines()
    assert len(lines) == 1, res.err
    return lines[0]


def refused_unchanged(root: Path, cwd: Path, *args: str, code: int = 2) -> str:
    """Run ptxgen in ``cwd``; it must refuse (one line, exit 2) and change nothing."""
    before = snapshot(root.parent)
    res = run_main(*args, cwd=cwd)
    line = one_line(res, code)
    assert snapshot(root.parent) == before, "a refused command changed the project"
    return line


# -- broken specs ----------------------------------------------------------------------

def _name_case(name: str) -> bytes:
    return (CASES / "demo.yaml.in").read_text().replace("NAME", name).encode()


def _deep(depth: int) -> bytes:
    return b"# yaml-language-server: $schema=../schema/descriptor.schema.json\n" + \
        b"descriptor: " + b"[" * depth + b"]" * depth + b"\n"


MODELINE = b"# yaml-language-server: $schema=../schema/descriptor.schema.json\n"

#: (case id, file name under spec/descriptors, content, the diagnostic ptxgen must print).
SPEC_CASES: list[tuple[str, str, Callable[[], bytes], str]] = [
    ("alias-bomb", "alias_bomb.yaml", lambda: (CASES / "alias_bomb.yaml").read_bytes(),
     "alias_bomb.yaml:8:15: alias *a4 makes the document expand to more than 100000 values "
     "(a YAML alias bomb?); spec files are limited to 100000"),
    ("recursive-alias", "recursive_alias.yaml",
     lambda: (CASES / "recursive_alias.yaml").read_bytes(),
     "recursive_alias.yaml:3:26: alias *self refers to a collection that contains it (a "
     "recursive alias)"),
    ("undefined-alias", "undefined_alias.yaml",
     lambda: (CASES / "undefined_alias.yaml").read_bytes(),
     "undefined_alias.yaml:3:8: alias *nowhere names no anchor defined before it"),
    ("deep-nesting", "deep.yaml", lambda: _deep(100_000),
     "deep.yaml:2:76: nesting deeper than 64 levels; spec files are limited to 64"),
    ("two-documents", "two_documents.yaml", lambda: (CASES / "two_documents.yaml").read_bytes(),
     "two_documents.yaml:3:1: a second YAML document ('---'); a spec file holds one document"),
    ("top-level-list", "top_level_list.yaml",
     lambda: (CASES / "top_level_list.yaml").read_bytes(),
     "top_level_list.yaml:2:1: the top level of a spec file must be a mapping of keys "
     "(such as 'descriptor: ...'), not a list"),
    ("python-tag", "python_tag.yaml", lambda: (CASES / "python_tag.yaml").read_bytes(),
     "python_tag.yaml:3:13: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:"
     "os.system': specs use plain mappings, sequences and scalars only"),
    ("python-scalar-tag", "python_scalar_tag.yaml",
     lambda: (CASES / "python_scalar_tag.yaml").read_bytes(),
     "python_scalar_tag.yaml:4:8: YAML syntax error: could not determine a constructor for "
     "the tag 'tag:yaml.org,2002:python/name:os.system'"),
    ("schema-device", "schema_device.yaml", lambda: (CASES / "schema_device.yaml").read_bytes(),
     "schema_device.yaml:1:1: the modeline names 'zero'; schemas are *.schema.json files"),
    ("overlap", "overlap.yaml", lambda: (CASES / "overlap.yaml").read_bytes(),
     "overlap.yaml:13:11: bit 3 overlaps field 'first' (bits 0-3)"),
    ("not-utf8", "latin1.yaml", lambda: MODELINE + b"descriptor: demo_desc\ntitle: caf\xe9\n",
     "latin1.yaml:3:11: byte 0xe9 is not UTF-8; spec files are UTF-8 text"),
    ("utf16", "utf16.yaml", lambda: (MODELINE + b"descriptor: demo_desc\n").decode()
     .encode("utf-16"),
     "utf16.yaml:1:1: byte 0xff is not UTF-8 (a UTF-16 byte-order mark: save the file as "
     "UTF-8); spec files are UTF-8 text"),
    ("yml-suffix", "other.yml", lambda: _name_case("first"),
     "other.yml:1:1: spec files end in '.yaml'; rename this file to other.yaml (it was not "
     "read)"),
    ("too-large", "huge.yaml", lambda: MODELINE + b"# " + b"x" * (5 * 1024 * 1024) + b"\n",
     "huge.yaml:1:1: 5242948 bytes; spec files are limited to 4194304 bytes"),
    ("empty", "empty.yaml", lambda: b"", "empty.yaml:1:1: empty document"),
    ("field-Foo", "demo.yaml", lambda: _name_case("Foo"),
     "demo.yaml:10:11: fields/0/name: 'Foo' breaks the naming rule: names are "
     "lower_snake_case: a lower-case letter, then lower-case letters, digits or '_'"),
    *[(f"field-{n}", "demo.yaml", (lambda n=n: _name_case(n)),
       f"demo.yaml:10:11: field name: '{n}' is reserved: {why}")
      for n, why in [
          ("encode", "it is a member of the generated descriptor classes and structs "
                     "(python, c++)"),
          ("decode", "it is a member of the generated descriptor classes and structs "
                     "(python, c++)"),
          ("replace", "it is a member of the generated descriptor classes (python)"),
          ("with_swizzle", "the C++ setters are named with_<field>()"),
          ("self", "it is the first parameter of every descriptor constructor (python)"),
          ("encode_checked", "it is a member of the generated descriptor structs (c++)"),
          ("first_above_7", "the C++ compile-error reasons are named <field>_above_<max>"),
      ]],
]


@pytest.mark.parametrize(("case", "name", "content", "message"), SPEC_CASES,
                         ids=[c[0] for c in SPEC_CASES])
def test_broken_spec_is_refused_and_nothing_is_written(project: Path, case: str, name: str,
                                                      content: Callable[[], bytes],
                                                      message: str) -> None:
    (project / "spec" / "descriptors" / name).write_bytes(content())
    before = snapshot(project.parent)
    start = time.monotonic()
    res = run_main("generate", cwd=project)
    took = time.monotonic() - start
    no_traceback(res)
    assert res.code == 2 and res.out == "", (res.code, res.out, res.err)
    lines = res.err.splitlines()
    assert f"spec/descriptors/{message}" in lines, res.err
    assert lines[-1].startswith("ptxgen: ") and lines[-1].endswith("error(s); nothing written")
    assert snapshot(project.parent) == before  # nothing written, nothing run (PWNED)
    assert took < 60, f"{case} took {took:.1f} s"
    res = run_main("validate", cwd=project)
    assert res.code == 2 and f"spec/descriptors/{message}" in res.err.splitlines(), res.err


def test_alias_bomb_is_refused_fast_in_small_memory(project: Path) -> None:
    """On main the 9-level bomb ran until killed (6 levels: 18 s, 1.6 GB)."""
    shutil.copy(CASES / "alias_bomb.yaml", project / "spec" / "descriptors")
    code = ("import resource, sys, time; from pathlib import Path\n"
            "from ptxgen.errors import SpecError\nfrom ptxgen.load import load_spec_dir\n"
            "t = time.perf_counter()\n"
            "try:\n    load_spec_dir(Path('spec'))\nexcept SpecError as e:\n    print(e)\n"
            "print(time.perf_counter() - t)\n"
            # the peak of this process's own memory: VmHWM (ru_maxrss keeps the peak of the
            # process it was forked from, a test worker holding gigabytes of ptxas results)
            "status = Path('/proc/self/status')\n"
            "hwm = [l for l in status.read_text().splitlines() if l.startswith('VmHWM:')] "
            "if status.exists() else []\n"
            "print(int(hwm[0].split()[1]) if hwm else "
            "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True,
                         text=True, timeout=120, check=True)
    message, seconds, max_rss_kb = res.stdout.strip().rsplit("\n", 2)
    assert "alias bomb" in message
    assert float(seconds) < 2.0
    assert int(max_rss_kb) < 200 * 1024  # the interpreter alone is about 30 MB


def test_a_bom_is_accepted(project: Path) -> None:
    path = project / "spec" / "descriptors" / "smem_desc.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    res = run_main("validate", cwd=project)
    assert res.code == 0, res.err


def test_a_hostile_git_revision_is_refused_by_diff(project: Path) -> None:
    """``ptxgen diff`` reads any revision: someone else's bomb is refused with REV:file."""
    shutil.copy(CASES / "alias_bomb.yaml", project / "spec" / "descriptors")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bomb")
    (project / "spec" / "descriptors" / "alias_bomb.yaml").unlink()
    before = snapshot(project.parent)
    res = run_main("diff", "HEAD~1", "HEAD", cwd=project)
    no_traceback(res)
    assert res.code == 2
    assert "HEAD:spec/descriptors/alias_bomb.yaml:8:15: alias *a4 makes the document expand" \
        in res.err, res.err
    assert snapshot(project.parent) == before


# -- hostile values ---------------------------------------------------------------------

WORD = "0x0003028000000000"  # README: non_zero_mask=1 skip_span=2 use_span=3

#: (argv, the one error line (a prefix of it)): exit 2, nothing on stdout.
VALUE_CASES: list[tuple[tuple[str, ...], str]] = [
    (("zero-column-mask", WORD, "--m", "128", "--n", "20000"),
     "ptxgen: error: zero-column-mask: n: 20000 is not allowed; allowed: a positive multiple "
     "of 1 (the sub-mask count for M=128) up to 256"),
    (("zero-column-mask", WORD, "--m", "32", "--n", "100000000"),
     "ptxgen: error: zero-column-mask: n: 100000000 is not allowed; allowed: a positive "
     "multiple of 4 (the sub-mask count for M=32) up to 256"),
    (("zero-column-mask", WORD, "--m", "64", "--n", "-2"),
     "ptxgen: error: zero-column-mask: n: -2 is not allowed"),
    (("encode", "smem_desc", "start_address=" + "9" * 4000),
     "ptxgen: error: smem_desc: start_address: 9999999999999999999999999999999999999... is "
     "not allowed; allowed: a shared-memory address that is a multiple of 16 (32 bits; the "
     "encoding keeps bits 4 to 17, up to 0x3fff0)"),
    (("decode", "smem_desc", "0x" + "f" * 5000),
     "ptxgen: error: HEX: 0xfffffffffffffffffffffffffffffffffff... does not fit"),
    (("decode", "smem_desc", "0x" + "z" * 5000),
     "ptxgen: error: HEX: '0xzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz...' is not a hexadecimal "
     "number"),
    (("encode", "instr_desc", "--kind", "F16"),
     "ptxgen: error: --kind: unknown kind 'F16' for instr_desc (did you mean 'f16'?)"),
    (("encode", "smem_desc", "start_adress=0"),
     "ptxgen: error: smem_desc: unknown field 'start_adress' (did you mean 'start_address'?)"),
    (("encode", "smem_desc", "swizzle=128B"),
     "ptxgen: error: smem_desc: swizzle: '128B' is not allowed (did you mean '128b'?)"),
    (("decode", "instr_dsc", "0x0"),
     "ptxgen: error: DESCRIPTOR: unknown descriptor 'instr_dsc' (did you mean 'instr_desc'?)"),
    (("support", "tcgen5.mma.cta_group::1.kind::f16"),
     "ptxgen: error: tcgen5.mma.cta_group::1.kind::f16: not a valid form: unknown instruction "
     "(did you mean 'tcgen05.mma.cta_group::1.kind::f16'?)"),
    (("support", "tcgen05.mma.cta_group::1.kind::f16", "--target", "sm100a"),
     "ptxgen: error: --target: unknown target 'sm100a' (did you mean 'sm_100a'?)"),
    (("support", "tcgen05.mma.cta_group::1.kind::f16", "--target", "SM_100A"),
     "ptxgen: error: --target: unknown target 'SM_100A' (did you mean 'sm_100a'?)"),
    (("support", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2x"),
     "ptxgen: error: tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2x: not a "
     "valid form: tcgen05.mma: cannot read '.scale_vec::2x' after "
     "'tcgen05.mma.cta_group::1.kind::mxf4.block_scale' (did you mean '.scale_vec::2X'?)"),
]


@pytest.mark.parametrize(("args", "message"), VALUE_CASES, ids=lambda x: str(x)[:40])
def test_hostile_value_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    start = time.monotonic()
    line = one_line(run_main(*args))
    assert line.startswith(message), line
    assert len(line) < 1000
    assert time.monotonic() - start < 30


# -- hostile paths ------------------------------------------------------------------------

def _link(project: Path) -> None:
    (project / "link").symlink_to(project / "sub", target_is_directory=True)


def _previous_output_with_a_foreign_file(project: Path) -> None:
    assert run_main("generate", cwd=project).code == 0
    (project / "generated" / "notes.txt").write_text("mine\n")


def _other_spec(project: Path) -> None:
    shutil.copytree(project / "spec", project.parent / "other" / "spec")


#: (case id, prepare, cwd below the project, argv, the one error line).
PATH_CASES: list[tuple[str, Callable[[Path], None] | None, str, tuple[str, ...], str]] = [
    ("root", None, ".", ("--out", "."),
     "ptxgen: error: --out . holds the spec folder spec (it would be deleted with it); "
     "nothing written"),
    ("spec", None, ".", ("--out", "spec"),
     "ptxgen: error: --out spec is the spec folder; nothing written"),
    ("above-spec-from-spec", None, "spec", ("--spec", ".", "--out", ".."),
     "ptxgen: error: --out .. holds the spec folder . (it would be deleted with it); "
     "nothing written"),
    ("inside-spec", None, ".", ("--out", "spec/out"),
     "ptxgen: error: --out spec/out is inside the spec folder spec; nothing written"),
    ("empty", None, ".", ("--out", ""),
     "ptxgen: error: --out is empty (an unset variable?); name a folder"),
    ("user-files", None, ".", ("--out", "kernels"),
     "ptxgen: error: --out kernels holds files ptxgen did not write (my_kernel.cu) and no "
     "ptxgen MANIFEST.json; ptxgen writes only into an empty or new folder, or one it "
     "generated before; nothing written"),
    ("regular-file", None, ".", ("--out", "afile"),
     "ptxgen: error: --out afile is a file, not a folder; nothing written"),
    ("symlink", _link, ".", ("--out", "link"),
     "ptxgen: error: --out link is a symbolic link; name the folder itself; nothing written"),
    ("current-folder", None, "sub", ("--spec", "../spec", "--out", "."),
     "ptxgen: error: --out . is the current folder; name a folder below it; nothing written"),
    ("above-current", None, "sub", ("--spec", "../../other/spec", "--out", ".."),
     "ptxgen: error: --out .. holds the current folder; nothing written"),
    ("foreign-file-in-output", _previous_output_with_a_foreign_file, ".", ("--out", "generated"),
     "ptxgen: error: --out generated holds files that its MANIFEST.json does not list "
     "(notes.txt); move them out of the output folder, which ptxgen replaces as a whole; "
     "nothing written"),
    ("unwritable", None, ".", ("--out", "/sys/ptxgen-hostile-out"),
     "ptxgen: error: --out /sys/ptxgen-hostile-out: cannot write: "),
]


@pytest.mark.parametrize(("case", "prepare", "cwd", "args", "message"), PATH_CASES,
                         ids=[c[0] for c in PATH_CASES])
def test_hostile_output_folder_is_refused_and_nothing_is_touched(
        project: Path, case: str, prepare: Callable[[Path], None] | None, cwd: str,
        args: tuple[str, ...], message: str) -> None:
    if case == "above-current":
        _other_spec(project)
    if prepare is not None:
        prepare(project)
    line = refused_unchanged(project, project / cwd, "generate", *args)
    assert line.startswith(message), line
    assert not Path("/sys/ptxgen-hostile-out").exists()
    assert not list(project.parent.glob(".*.new-*")) and not list(project.glob(".*.old-*"))


def test_the_repository_root_is_refused_even_with_a_spec_elsewhere(project: Path) -> None:
    _other_spec(project)
    line = refused_unchanged(project, project.parent / "other",
                             "generate", "--spec", "spec", "--out", "../project")
    assert line == ("ptxgen: error: --out ../project is a git repository; nothing written"), line


def test_read_only_file_system_is_one_line(project: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only file system (EROFS from the first write) is reported, not a traceback.
    The failure is injected at the operating-system call (tempfile.mkdtemp)."""
    import errno
    import tempfile

    def refuse(*a: object, **k: object) -> str:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), k.get("dir"))

    before = snapshot(project.parent)
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    line = one_line(run_main("generate", "--out", "out", cwd=project))
    monkeypatch.undo()
    assert line == (f"ptxgen: error: --out out: cannot write: Read-only file system "
                    f"({project}); nothing written"), line
    assert snapshot(project.parent) == before


def test_a_new_output_folder_touches_nothing_else(project: Path) -> None:
    before = snapshot(project.parent)
    res = run_main("generate", "--out", "new/deep/out", cwd=project)
    assert res.code == 0, res.err
    after = snapshot(project.parent)
    added = {p for p in after if p not in before}
    assert all(p.startswith("project/new") for p in added), sorted(added)[:5]
    assert {p: v for p, v in after.items() if p in before} == before


# -- from a subfolder -----------------------------------------------------------------

def test_diff_from_the_spec_folder(project: Path) -> None:
    path = project / "spec" / "descriptors" / "smem_desc.yaml"
    path.write_text(path.read_text().replace("description: Matrix base offset",
                                             "description: Matrix base offset (edited)"))
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    res = run_main("diff", "HEAD~1", "HEAD", cwd=project / "spec")
    no_traceback(res)
    assert res.code == 0, res.err
    assert res.out.startswith("ptxgen diff: HEAD~1 (git ") and ", spec/) -> HEAD (git " in res.out


def test_generate_and_check_from_a_subfolder(project: Path) -> None:
    res = run_main("generate", cwd=project / "sub")
    assert res.code == 0, res.err
    files = len(json.loads((project / "generated" / "MANIFEST.json").read_text())["files"])
    assert res.out == f"wrote {files + 1} files to ../generated\n", res.out
    assert (project / "generated" / "MANIFEST.json").is_file()
    assert run_main("check", cwd=project / "spec" / "descriptors").code == 0
    count = len(list((project / "spec" / "descriptors").glob("*.yaml")))
    assert run_main("validate", cwd=project / "spec" / "descriptors").out == \
        f"..: {count} spec files valid\n"


def test_no_project_is_explained(tmp_path: Path) -> None:
    """Outside any project (issue 28) generate and check without --out are refused (never
    writing into the installed package); the other commands use the installed spec and
    say so in one line."""
    for cmd in (("generate",), ("check",)):
        line = one_line(run_main(*cmd, cwd=tmp_path))
        assert line == (f"ptxgen: error: no ptxgen project here: neither {tmp_path} nor a folder "
                        "above it has a spec/ folder; run ptxgen inside a project or give "
                        "--spec DIR (or --out DIR, with the installed spec)"), line
    note = (f"ptxgen: no project here (no spec/ folder in {tmp_path} or above); using the "
            f"installed spec {SPEC}")
    for cmd in (("validate",), ("diff", "--ptx-isa", "8.6", "9.0")):
        res = run_main(*cmd, cwd=tmp_path)
        no_traceback(res)
        assert res.code in (0, 1) and res.err.splitlines() == [note], res.err
    assert run_main("validate", cwd=tmp_path).out.startswith(f"{SPEC}: ")
    assert list(tmp_path.iterdir()) == []


# -- Ctrl-C ------------------------------------------------------------------------------
#
# Real signals to real ``python -m ptxgen`` processes, sent at moments the test observes
# (never after a guessed delay, which a loaded machine turns into another moment): once
# ptxgen's command runs (its SIGTERM handler is installed: ``SigCgt`` of /proc/PID/status,
# before the spec is read), or once its temporary output folder exists (it is writing).

def _start(cmd: list[str], cwd: Path, no_cache: bool = False,
           out: int = subprocess.PIPE) -> subprocess.Popen[str]:
    """Start ptxgen CMD. no_cache: without the spec cache (ptxgen.cache), so that the
    command reads and checks the spec (seconds) after it starts."""
    env = {**os.environ, "PTXGEN_NO_CACHE": "1"} if no_cache else None
    return subprocess.Popen([sys.executable, "-m", "ptxgen", *cmd], cwd=cwd, text=True, env=env,
                            stdout=out, stderr=out,
                            # a shell's background job ignores SIGINT; a user's does not
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> bool:
    """Poll until ``ready()`` (True) or the process ends (False)."""
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if ready():
            return True
        time.sleep(0.0005)
    return False


def _running(proc: subprocess.Popen[str]) -> Callable[[], bool]:
    """Whether ptxgen's command runs: it catches SIGTERM (ptxgen.cli installs the handler
    after parsing the command line, before it reads the spec)."""
    status = Path(f"/proc/{proc.pid}/status")

    def ready() -> bool:
        try:
            line = next(x for x in status.read_text().splitlines() if x.startswith("SigCgt:"))
        except (OSError, StopIteration):
            return False
        return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return ready


def _writing(proc: subprocess.Popen[str], parent: Path, name: str) -> Callable[[], bool]:
    """Whether ptxgen's temporary output folder ``.NAME.new-PID-*`` exists in ``parent``."""
    prefix = f".{name}.new-{proc.pid}-"
    return lambda: any(p.name.startswith(prefix) for p in parent.iterdir())


def _interrupt(cmd: list[str], cwd: Path, sig: int = signal.SIGINT, no_cache: bool = False,
               when: Callable[[subprocess.Popen[str]], Callable[[], bool]] = _running,
               ) -> subprocess.CompletedProcess[str]:
    """Run ptxgen CMD and send it SIG once ``when(proc)()`` holds (default: the command
    runs); a process that ended first is returned as it ended."""
    proc = _start(cmd, cwd, no_cache)
    if _wait_for(proc, when(proc)):
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the whole spec whose generated/ is that of an older spec: the
    repository's generated/ (``ptxgen check`` holds it equal to what spec/ generates),
    and a spec in which one description differs, so that the next generate replaces
    it. Shared by the signal tests, each of which leaves generated/ whole."""
    root = tmp_path_factory.mktemp("signals") / "p"
    root.mkdir()
    shutil.copytree(SPEC, root / "spec")
    shutil.copytree(ROOT / "generated", root / "generated",
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "spec" / "descriptors" / "smem_desc.yaml"
    text = path.read_text()
    assert "Matrix base offset" in text
    path.write_text(text.replace("Matrix base offset", "Matrix base offset (new)"))
    return root


def _whole(folder: Path) -> None:
    """``folder`` holds exactly the files its MANIFEST.json lists, with their hashes."""
    listed = json.loads((folder / "MANIFEST.json").read_text())["files"]
    got = _tree(folder)
    assert sorted(got) == sorted([*listed, "MANIFEST.json"])
    assert all(hashlib.sha256(got[p]).hexdigest() == h for p, h in listed.items())


def test_ctrl_c_during_generate(generated_project: Path) -> None:
    """A real SIGINT while generate reads the spec and while it writes its files: exit
    130 and one line; the output folder stays the old one, whole, and no temporary
    folder is left."""
    root = generated_project
    old = _tree(root / "generated")
    for when in (_running, lambda p: _writing(p, root, "generated")):
        res = _interrupt(["generate"], root, when=when)
        assert res.returncode == 130, (res.returncode, res.stderr)
        assert res.stderr == "ptxgen: interrupted; nothing was left half-written\n"
        assert res.stdout == ""
        assert _tree(root / "generated") == old  # never a mixture
        assert sorted(p.name for p in root.iterdir()) == ["generated", "spec"]


@pytest.mark.parametrize("cmd", [["validate"], ["check", "--full"],
                                 ["diff", "--ptx-isa", "8.6", "9.0", "--format", "json"]])
def test_ctrl_c_during_other_commands(cmd: list[str]) -> None:
    res = _interrupt(cmd, ROOT, no_cache=True)
    assert res.returncode == 130, (res.returncode, res.stderr)
    assert res.stderr == "ptxgen: interrupted; nothing was left half-written\n"
    if "json" in cmd:  # --json/--format json: the error as JSON on stdout too
        assert json.loads(res.stdout) == {"ok": False, "exit_code": 130, "error": {
            "message": "interrupted; nothing was left half-written", "diagnostics": []}}


def test_sigterm_cleans_up_too(tmp_path: Path) -> None:
    """SIGTERM (a CI job cancelled, ``kill``) once generate runs: one line, exit 143,
    nothing written (the same clean-up as Ctrl-C, which is sent while it writes above)."""
    res = _interrupt(["generate", "--out", str(tmp_path / "out")], ROOT, signal.SIGTERM)
    assert res.returncode == 143, (res.returncode, res.stderr)
    assert res.stderr == "ptxgen: terminated; nothing was left half-written\n"
    assert list(tmp_path.iterdir()) == []


def test_sigkill_while_writing_leaves_the_old_output_and_debris_the_next_run_removes(
        generated_project: Path) -> None:
    """SIGKILL cannot be caught: ``generate`` killed while it writes its files leaves the
    previous output whole and at most its temporary folder, which the next ``generate``
    removes (its first step, ptxgen.write.clean_debris: run here alone)."""
    from ptxgen import write

    root = generated_project
    old = _tree(root / "generated")
    killed = 0
    for _ in range(3):
        proc = _start(["generate"], root, out=subprocess.DEVNULL)
        if _wait_for(proc, _writing(proc, root, "generated")):
            proc.kill()
        if proc.wait(timeout=60) == -signal.SIGKILL:
            killed += 1
            assert _tree(root / "generated") == old  # the previous output, whole
            debris = sorted(p.name for p in root.iterdir() if p.name.startswith(".generated."))
            assert debris, "the kill landed while the temporary folder existed"
            assert all(d.startswith(".generated.new-") for d in debris), debris
            break
        old = _tree(root / "generated")
    assert killed, "generate finished every time before it could be killed"
    assert sorted(write.clean_debris(root / "generated")) == [root / d for d in debris]
    assert sorted(p.name for p in root.iterdir()) == ["generated", "spec"]  # debris removed
    _whole(root / "generated")


def test_debris_of_a_running_writer_is_left_alone(tmp_path: Path) -> None:
    """Only the temporary folders of processes that no longer run are debris: a concurrent
    ``generate`` into the same folder keeps its own."""
    from ptxgen import write

    out = tmp_path / "generated"
    mine = tmp_path / f".generated.new-{os.getpid()}-abc123"
    mine.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = tmp_path / f".generated.old-{proc.pid}-xyz789"
    (dead / "sub").mkdir(parents=True)
    other = tmp_path / f".other.new-{proc.pid}-xyz789"
    other.mkdir()
    write.write_tree(out, {"MANIFEST.json": b"{}", "a.txt": b"a"})
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["generated", mine.name, other.name])
    assert write.existing_files(out) == {"MANIFEST.json": b"{}", "a.txt": b"a"}


def test_a_swap_cut_between_its_renames_is_undone_by_the_next_write(tmp_path: Path) -> None:
    """Without an atomic exchange (renameat2), a kill between the two renames leaves no
    output folder and the old one as ``.NAME.old-PID-*``; the next write puts it back
    before it checks and replaces it."""
    from ptxgen import write

    out = tmp_path / "generated"
    write.write_tree(out, {"MANIFEST.json": json.dumps(
        {"comment": "Generated by ptxgen", "files": {"a.txt": ""}}).encode(), "a.txt": b"a"})
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    old = tmp_path / f".generated.old-{proc.pid}-q1w2e3"
    out.rename(old)
    assert write.clean_debris(out) == [old]
    assert write.existing_files(out)["a.txt"] == b"a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated"]


def _commit_hostile_schema(project: Path, edit: Callable[[dict[str, object]], None],
                           title: str) -> None:
    """Commit a revision whose own descriptor schema is edited by ``edit`` and whose
    smem_desc title is ``title``; the working tree goes back to the good spec."""
    schema = project / "spec" / "schema" / "descriptor.schema.json"
    desc = project / "spec" / "descriptors" / "smem_desc.yaml"
    good_schema, good_desc = schema.read_text(), desc.read_text()
    doc = json.loads(good_schema)
    edit(doc)
    schema.write_text(json.dumps(doc))
    desc.write_text(good_desc.replace("title: tcgen05 shared memory descriptor",
                                      f"title: {title}"))
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "hostile")
    schema.write_text(good_schema)
    desc.write_text(good_desc)


def _backtracking_pattern(doc: dict[str, object]) -> None:
    doc["properties"]["title"]["pattern"] = "^(a+)+$"  # type: ignore[index]


def _exponential_refs(doc: dict[str, object]) -> None:
    defs = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
            for i in range(60)}
    defs["d60"] = {"type": "string"}
    doc.setdefault("$defs", {}).update(defs)  # type: ignore[attr-defined]
    doc["properties"]["title"] = {"$ref": "#/$defs/d0"}  # type: ignore[index]


def _ref_to_nowhere(doc: dict[str, object]) -> None:
    doc["properties"]["title"] = {"$ref": "https://example.invalid/x.json"}  # type: ignore[index]


@pytest.mark.parametrize(("edit", "message"), [
    (_backtracking_pattern, "took longer than 5 s"),
    (_exponential_refs, "took longer than 5 s"),
    (_ref_to_nowhere, "cannot be used"),
])
def test_a_hostile_schema_in_a_git_revision_cannot_hang_diff(
        project: Path, edit: Callable[[dict[str, object]], None], message: str) -> None:
    """A revision is loaded with the schemas it carries: a pattern that backtracks
    exponentially on the revision's own value, ``$ref`` chains that double the work 60
    times, or a ``$ref`` to the network are refused, naming REV:file, within the
    schema time limit (ptxgen.validate.schema.MAX_SCHEMA_SECONDS)."""
    _commit_hostile_schema(project, edit, "a" * 64 + "!")
    before = snapshot(project.parent)
    start = time.monotonic()
    res = run_cli("diff", "HEAD~1", "HEAD", cwd=project, timeout=120)
    assert time.monotonic() - start < 60
    no_traceback(res)
    assert res.code == 2, (res.code, res.out, res.err)
    assert "HEAD:spec/descriptors/smem_desc.yaml:1:1: " in res.err, res.err
    assert message in res.err, res.err
    if edit is _exponential_refs:  # every descriptor file is slow: one wait, not five
        assert res.err.count("refused without another try") == res.err.count(
            "took longer than") - 1 >= 3, res.err
    assert snapshot(project.parent) == before
