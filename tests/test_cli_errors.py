"""Errors a user can act on (issue 12): ``--json`` everywhere it is offered, errors
included, in one shape; "did you mean"; one case rule; every exit code documented; the
zero-column mask's real maximum N; the output folder's swap under interrupts.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, SPEC, run_main
from ptxgen import cli, pipeline, write
from ptxgen.isa import DescriptorError, ZeroColumnMaskDesc


def json_error(*args: str, code: int = 2, cwd: Path = ROOT) -> dict[str, object]:
    """The JSON error on stdout and the same message as one line on stderr."""
    res = run_main(*args, cwd=cwd)
    assert res.code == code, (res.code, res.out, res.err)
    payload = json.loads(res.out)
    assert set(payload) == {"ok", "exit_code", "error"}
    assert payload["ok"] is False and payload["exit_code"] == code
    error = payload["error"]
    assert set(error) == {"message", "diagnostics"}
    lines = res.err.splitlines()
    assert lines[-1].endswith(error["message"]), (lines, error)
    return error


@pytest.mark.parametrize("args", [
    ("support", "tcgen05.mma.kind::f16", "--json"),
    ("support", "tcgen05.mma.cta_group::1.kind::f16", "--target", "sm100a", "--json"),
    ("decode", "smem_desc", "0x1", "--json"),  # the fixed bits 46-48 are not 0b001
    ("decode", "instr_desc", "--kind", "f16", "0x00000040", "--json"),
    ("decode", "smem_desc", "0xzz", "--json"),
    ("encode", "smem_desc", "start_address=3", "--json"),
    ("encode", "instr_desc", "--kind", "F16", "--json"),
    ("zero-column-mask", "0x0", "--m", "128", "--n", "512", "--json"),
    ("diff", "no-such-revision", "HEAD", "--format", "json"),  # refused before HEAD is read
    ("diff", "--ptx-isa", "8.6", "8.9", "--format", "json"),
    ("check", "--ptx-isa", "1.0", "--json"),
    ("decode", "--json"),  # usage error from the argument parser
])
def test_every_error_has_the_json_shape(args: tuple[str, ...]) -> None:
    error = json_error(*args)
    assert error["diagnostics"] == [] and error["message"], error


@pytest.mark.parametrize("out", ["spec", ""])
def test_a_refused_output_folder_in_json(spec_core: Path, out: str) -> None:
    """Run in a private copy: on code without the guard these commands destroyed the
    folder they ran in."""
    error = json_error("generate", "--out", out, "--json", cwd=spec_core.parent)
    assert error["message"].startswith(f"--out {out}")  # type: ignore[union-attr]


def test_spec_errors_in_json_carry_their_diagnostics(spec_core: Path) -> None:
    path = spec_core / "descriptors" / "smem_desc.yaml"
    # the baseline layout's field only (the sm107 variant lists lbo_mode again)
    path.write_text(path.read_text().replace("name: lbo_mode", "name: encode", 1))
    for args in (("validate",), ("generate", "--out", str(spec_core.parent / "out")),
                 ("check", "--out", str(spec_core.parent / "out"))):
        error = json_error(*args, "--spec", str(spec_core), "--json")
        assert error["message"] == "1 error(s); nothing written"
        (diag,) = error["diagnostics"]  # type: ignore[misc]
        assert diag["file"].endswith("descriptors/smem_desc.yaml") and diag["line"] > 1
        assert "'encode' is reserved" in diag["message"]
    error = json_error("diff", str(spec_core), "spec", "--format", "json")
    assert len(error["diagnostics"]) == 1  # type: ignore[arg-type]
    assert not (spec_core.parent / "out").exists()


def test_encode_json_agrees_with_decode_json() -> None:
    args = ["instr_desc", "--kind", "f16", "dtype=f32", "atype=bf16", "btype=bf16", "n=256",
            "m=128"]
    plain = run_main("encode", *args)
    res = run_main("encode", *args, "--json")
    assert res.code == 0 and res.err == "", res.err
    payload = json.loads(res.out)
    assert payload["hex"] == plain.out.strip() == "0x08400490"  # README / Table 42
    assert payload["word"] == 0x08400490
    assert payload["descriptor"] == "instr_desc" and payload["kind"] == "f16"
    decoded = json.loads(run_main("decode", "instr_desc", "--kind", "f16", payload["hex"],
                                 "--json").out)
    assert payload["fields"] == decoded


# -- one case rule ----------------------------------------------------------------------

@pytest.mark.parametrize(("args", "suggestion"), [
    (("encode", "instr_desc", "--kind", "F16", "dtype=f32"), "'f16'"),
    (("encode", "instr_desc", "--kind", "f16", "dtype=F32"), "'f32'"),
    (("encode", "SMEM_DESC"), "'smem_desc'"),
    (("encode", "smem_desc", "Swizzle=128b"), "'swizzle'"),
    (("support", "tcgen05.mma.cta_group::1.kind::f16", "--target", "SM_100A"), "'sm_100a'"),
    (("support", "TCGEN05.MMA.cta_group::1.kind::f16"), "'tcgen05.mma.cta_group::1.kind::f16'"),
    (("support", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2x"),
     "'.scale_vec::2X'"),
])
def test_names_and_values_match_exactly_and_suggest_the_spelling(args: tuple[str, ...],
                                                                  suggestion: str) -> None:
    res = run_main(*args)
    assert res.code == 2 and res.out == ""
    assert f"(did you mean {suggestion}?)" in res.err, res.err


def test_ptx_spellings_keep_their_upper_case() -> None:
    res = run_main("support", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X",
                  "--target", "sm_100a")
    assert res.code == 0, res.err


def test_hex_digits_are_numbers_in_any_case() -> None:
    assert run_main("decode", "smem_desc", "0X4000404000010040").out == \
        run_main("decode", "smem_desc", "0x4000404000010040").out != ""


def test_readme_documents_the_case_rule_and_every_exit_code() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "### Names, values and case" in readme
    codes = {v for k, v in vars(cli).items() if k.startswith("EXIT_")}
    assert codes == {0, 1, 2, 130, 143}
    table = readme[readme.index("### Exit codes"):]
    for code in codes:
        assert re.search(rf"^\| `{code}` \|", table, re.M), code


# -- the zero-column mask's real N -----------------------------------------------------

def cutlass_max_n() -> int:
    """The largest N any SM100 MMA of CUTLASS allows (cute/arch/mma_sm100_umma.hpp)."""
    from cpp.harness import cutlass_include

    text = (cutlass_include() / "cute" / "arch" / "mma_sm100_umma.hpp").read_text()
    bounds = {int(n) for n in re.findall(r"\(N <= (\d+)\)", text)}
    assert bounds
    return max(bounds)


def test_masks_refuse_n_beyond_the_largest_mma_n() -> None:
    most = cutlass_max_n()
    assert most == 256
    desc = ZeroColumnMaskDesc(non_zero_mask=1, skip_span=2, use_span=3)
    assert len(desc.masks(128, most)) == 1
    for n in (most + 1, most + 8, 20000, 100_000_000):
        with pytest.raises(DescriptorError) as info:
            desc.masks(128, n)
        assert info.value.field == "n" and f"up to {most}" in str(info.value)
    res = run_main("zero-column-mask", "0x0003028000000000", "--m", "128", "--n", str(most),
                  "--json")
    assert res.code == 0 and len(json.loads(res.out)["masks"]) == 1


# -- the swap under interrupts (in-process; tests/hostile sends real SIGINTs) ----------

def _small_spec(tmp_path: Path) -> Path:
    import shutil

    spec = tmp_path / "spec"
    shutil.copytree(SPEC / "descriptors", spec / "descriptors")
    shutil.copytree(SPEC / "schema", spec / "schema")
    return spec


def test_an_interrupt_while_writing_leaves_the_old_output(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _small_spec(tmp_path)
    out = tmp_path / "generated"
    pipeline.generate(spec, out)
    before = write.existing_files(out)
    files = pipeline.render(spec)
    real = Path.write_bytes
    calls = {"n": 0}

    def interrupted(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write.write_tree(out, {**files, "new.txt": b"x"})
    monkeypatch.undo()
    assert write.existing_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated", "spec"]


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt, as in the command line (a test worker may ignore it:
    pytest-xdist's workers leave Ctrl-C to their controller)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_sigint_during_the_swap_is_held_until_it_is_done(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          ctrl_c_raises: None) -> None:
    spec = _small_spec(tmp_path)
    out = tmp_path / "generated"
    pipeline.generate(spec, out)
    files = {**pipeline.render(spec), "new.txt": b"x"}
    real = os.rename

    def rename_and_interrupt(a: object, b: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C between the two renames
        real(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "rename", rename_and_interrupt)
    monkeypatch.setattr(write, "_exchange", lambda a, b: False)  # the two-rename fallback
    with pytest.raises(KeyboardInterrupt):
        write.write_tree(out, files)
    monkeypatch.undo()
    assert write.existing_files(out) == files  # the swap completed before the interrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated", "spec"]


def test_a_sigint_during_the_atomic_exchange_is_held_until_it_is_done(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctrl_c_raises: None) -> None:
    spec = _small_spec(tmp_path)
    out = tmp_path / "generated"
    pipeline.generate(spec, out)
    files = {**pipeline.render(spec), "new.txt": b"x"}
    real = write._exchange
    used = []

    def exchange_and_interrupt(a: Path, b: Path) -> bool:
        os.kill(os.getpid(), signal.SIGINT)
        used.append(real(a, b))
        return used[-1]

    monkeypatch.setattr(write, "_exchange", exchange_and_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write.write_tree(out, files)
    monkeypatch.undo()
    assert used == [True]  # Linux: renameat2(RENAME_EXCHANGE)
    assert write.existing_files(out) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated", "spec"]


def test_a_refused_write_removes_the_folders_it_created(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write.tempfile, "mkdtemp", full)
    with pytest.raises(OSError):
        write.write_tree(tmp_path / "a" / "b" / "out", {"x": b"y"})
    assert list(tmp_path.iterdir()) == []
