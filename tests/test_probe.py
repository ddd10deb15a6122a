"""Issue 13, part 5: ``ptxgen probe`` turns a new toolkit into a reviewed spec change.

Oracles: ptxas 13.5 (test dependency) and ptxas 13.0 (PATH), tests/toolkits.py.

* On the final spec, each toolkit finds nothing to propose: ptxas 13.0 with the
  deviations the spec records for toolkit 13.0, ptxas 13.5 with the ISA's rule.
* On the spec as it was before this issue (tests/fixtures/probe/spec-9.0, the
  spec of commit 533301c), ptxas 13.5 proposes every change made since: the change
  set is computed from the two specs (versions, targets, first versions, qualifier
  values, and every form x target x version whose support differs), not listed by
  hand, and each item must be among the proposals. Qualifier values come from the
  strings of ptxas and of the toolkit's cicc (.kind::ti16 is only in cicc's), and from
  syntax lines of the document's form (tests/fixtures/probe/doc: issue 25's
  .scale_vec::4X with .ue8m0 and the .f64 rounding, which no binary spells).
* The command line: its exit codes (0 / 1 / 2) and its JSON (schema ptxgen-probe/1).

The probes run in this process and share their assemblies (an in-memory cache)
with each other and with the conformance matrix of
generated/tests/test_ptxas_conformance.py; the command-line tests reuse them (in
this process, and through the on-disk cache PTXGEN_PROBE_CACHE for the one run as a
separate process). The final spec's probes are CI's (``cover``: covering arrays of
forms, every candidate value once); the whole probe is benchmarks/bench_probe.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import toolkits

from conftest import spec_subset
from ptxgen.cli import main
from ptxgen.isa import ptx
from ptxgen.model.instructions import InstructionSet, vkey
from ptxgen.pipeline import load_model
from ptxgen.probe import Assembler, ProbeResult, probe
from ptxgen.probe.matrix import checked_targets, covering_plan, toolkit_of

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
OLD_SPEC = ROOT / "tests" / "fixtures" / "probe" / "spec-9.0"
# syntax lines of the PTX ISA 9.1-9.4 additions (issue 25) for the probe's --doc source
DOC = ROOT / "tests" / "fixtures" / "probe" / "doc"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The on-disk assembly cache: PTXGEN_PROBE_CACHE if set (a developer's), else a fresh
    folder for this run."""
    before = os.environ.get("PTXGEN_PROBE_CACHE")
    folder = Path(before) if before else tmp_path_factory.mktemp("probe-cache")
    os.environ["PTXGEN_PROBE_CACHE"] = str(folder)
    yield folder
    if before is None:
        del os.environ["PTXGEN_PROBE_CACHE"]


_results: dict[tuple[str, str], ProbeResult] = {}


def _probe(spec: Path, release: str) -> ProbeResult:
    """CI's probe (``cover``: each instruction's value forms on every pair, the rest of its
    covering array once: the plan of the conformance matrix, whose assemblies it shares;
    the final spec's candidate values each once); the whole probe is
    benchmarks/bench_probe.py."""
    key = (str(spec), release)
    if key not in _results:
        asm = Assembler.open(toolkits.require("ptxas", release))
        iset = ptx.instruction_set() if spec == SPEC else None
        # the old spec's few instructions try each new value in every combination's form
        _results[key] = probe(spec, asm, iset=iset, doc=[DOC] if spec == OLD_SPEC else [],
                              cover=True, sample_candidates=spec != OLD_SPEC)
    return _results[key]


def _probed_keys(iset: InstructionSet, release: str = "13.5") -> set[str]:
    """The form keys a covering probe of ``iset`` assembles (its plan)."""
    asm = Assembler.open(toolkits.require("ptxas", release))
    chosen = covering_plan(iset, checked_targets(iset.targets, asm), toolkit_of(iset.targets, asm))
    return {f.key for f in chosen.forms}


def _old() -> InstructionSet:
    iset = load_model(OLD_SPEC).instructions
    assert iset is not None
    return iset


@pytest.mark.parametrize("release", toolkits.RELEASES)
def test_each_toolkit_agrees_with_the_final_spec(cache: Path, release: str) -> None:
    result = _probe(SPEC, release)
    assert result.toolkit == release
    # the instructions the spec has only a part of (`partial`, issue 26) still lack forms the
    # assembler takes: those proposals are expected; every other instruction agrees
    partial = {n for i in ptx.instruction_set().instructions if i.partial
               for n in (i.id, i.name)}
    proposals = [p.as_dict() for p in result.proposals]
    others = [p for p in proposals if p.get("details", {}).get("instruction") not in partial]
    assert others == []
    assert result.exit_code == (1 if proposals else 0)
    assert result.stats["candidates"] > 0 and result.stats["near_misses"] > 0


def test_the_covering_probe_finds_a_broken_gate(cache: Path, tmp_path: Path) -> None:
    """CI's probe (``cover``) still sees a gate the spec gets wrong: redux.sync claimed
    from PTX ISA 7.3 where ptxas 13.5 assembles it from 7.0 (on sm_80 and later); only
    the broken instruction is proposed, at the versions the edit moved."""
    # the one instruction file (the whole spec's agreement is the tests above)
    spec_copy = spec_subset(tmp_path / "spec", ("warp.yaml",), descriptors=False)
    warp = spec_copy / "instructions" / "warp.yaml"
    text = warp.read_text()
    gate = ("targets: [sm_80+]\n        since: \"7.0\"\n        provenance: {seeds: [], "
            "ptxas: \"Feature 'redux'")
    assert text.count(gate) == 1
    warp.write_text(text.replace(gate, gate.replace('"7.0"', '"7.3"')))
    asm = Assembler.open(toolkits.require("ptxas", "13.5"))
    result = probe(spec_copy, asm, cover=True)
    broken = [p for p in result.proposals if p.details.get("instruction") == "redux_sync"]
    assert broken and {p.kind for p in broken} == {"forms-accepted"}, \
        [p.subject for p in result.proposals]
    # the targets that exist before 7.3 (sm_80 from 7.0, sm_86 from 7.1; redux needs sm_80)
    assert {tuple(sorted(p.details["where"].items())) for p in broken} == {
        (("sm_80", "7.0-7.2"), ("sm_86", "7.1-7.2"))}
    partial = {n for i in ptx.instruction_set().instructions if i.partial
               for n in (i.id, i.name)}
    others = [p.subject for p in result.proposals if p not in broken
              and p.details.get("instruction") not in partial]
    assert others == []


@pytest.fixture(scope="module")
def old_result(cache: Path) -> ProbeResult:
    return _probe(OLD_SPEC, "13.5")


def test_new_and_older_ptx_isa_versions_are_proposed(old_result: ProbeResult) -> None:
    """Newer versions are proposed as the assembler knows them; an older one where a form
    of the old spec's instructions assembles (the final spec's 6.3 is where sm_75 and the
    fences begin, which the old spec does not have: not proposed)."""
    iset, old_iset = ptx.instruction_set(), _old()
    new, old = iset.targets, old_iset.targets
    old_ids = {i.id for i in old_iset.instructions}

    def old_forms_at(v: str) -> bool:
        return any(f.support.supported(new, t.name, v) for i in iset.instructions
                   if i.id in old_ids for f in i.forms for t in new.targets)

    added = {v for v in new.versions if v not in old.versions}
    expected = {v for v in added if vkey(v) > vkey(old.versions[-1]) or old_forms_at(v)}
    proposed = {p.details["version"] for p in old_result.proposals
                if p.kind == "ptx-isa-version"}
    assert expected == proposed == {"6.4", "6.5", "9.1", "9.2", "9.3", "9.4", "9.5"}
    assert added - proposed == {"6.3"}


def test_new_targets_are_proposed_with_version_family_and_forms(old_result: ProbeResult
                                                                ) -> None:
    new, old = ptx.instruction_set(), _old()
    added = {t.name for t in new.targets.targets if t.name not in old.targets.by_name}
    proposals = {p.details["target"]: p for p in old_result.proposals
                 if p.kind == "target-added"}
    assert set(proposals) == added == {"sm_107", "sm_107a", "sm_107f"}
    for name, p in proposals.items():
        t = new.targets.get(name)
        assert p.details["since"] == t.since
        assert p.details["family"] == t.family or (t.suffix == "" and p.details["family"]
                                                   == new.targets.get(f"{name}f").family)
        # the old spec's probed forms (its covering plan) that ptxas 13.5 accepts there are
        # the ones the final spec gives it (the final spec's new instructions are not in
        # the old one)
        old_keys = _probed_keys(old)
        want = sum(1 for i in new.instructions for f in i.forms if f.key in old_keys
                   and f.support.supported(new.targets, name, new.targets.newest))
        assert p.details["forms"] == want, p.message


def test_changed_first_versions_of_targets_are_proposed(old_result: ProbeResult) -> None:
    new, old = ptx.instruction_set().targets, _old().targets
    # (sm_75's move to 6.4 is the new versions below 7.0, proposed as ptx-isa-version)
    changed = {t.name: t.since for t in new.targets if t.name in old.by_name
               and old.get(t.name).since != t.since
               and vkey(t.since) >= vkey(old.versions[0])}
    proposed = {p.details["target"]: p.details["since"] for p in old_result.proposals
                if p.kind == "target-since"}
    assert proposed == changed == {"sm_88": "9.0"}
    p = next(p for p in old_result.proposals if p.kind == "target-since")
    assert "does not support .target sm_88" in p.ptxas


def test_every_changed_form_support_is_proposed(old_result: ProbeResult) -> None:
    """Every (form, target, version) that the final spec supports and the old one did not
    (or the reverse), on targets and versions both specs know or older versions, is in a
    forms-accepted (forms-refused) proposal: of the (form, target, version) the covering
    probe assembles (its plan: value forms everywhere, the rest at the newest version)."""
    new, old = ptx.instruction_set(), _old()
    asm = Assembler.open(toolkits.require("ptxas", "13.5"))
    old_checked = checked_targets(old.targets, asm)
    chosen = covering_plan(old, old_checked, toolkit_of(old.targets, asm))
    every = {f.key for f in chosen.every_pair}
    at_newest = {(t, f.key) for t, fs in chosen.newest.items() for f in fs}

    def probed(key: str, target: str, version: str) -> bool:
        return key in every or (version == old_checked.newest and (target, key) in at_newest)
    accepted = {k for p in old_result.proposals if p.kind == "forms-accepted"
                for k in p.details["forms"]}
    # a new value or a new qualifier is proposed once, with the forms ptxas took among the
    # candidates (one form per combination): its other forms are that proposal's too
    new_values = {(p.details["instruction"], p.details["qualifier"], p.details["value"])
                  for p in old_result.proposals if p.kind == "qualifier-value"}
    new_tokens = {(p.details["instruction"], p.details["token"])
                  for p in old_result.proposals if p.kind == "qualifier-added"}
    refused = {k for p in old_result.proposals if p.kind == "forms-refused"
               for k in p.details["forms"]}
    versions = [v for v in new.targets.versions
                if v in old.targets.versions or vkey(v) < vkey(old.targets.versions[0])]
    widened, narrowed = set(), set()
    for ins in new.instructions:
        try:
            old_ins = old.get(ins.id)
        except KeyError:
            continue
        old_forms = {f.key: f for f in old_ins.forms}
        old_quals = {q.name: set(q.values) for q in old_ins.qualifiers}
        for f in ins.forms:
            of = old_forms.get(f.key)
            if any((ins.id, q.name, f.params[q.name]) in new_values
                   for q in ins.qualifiers if q.name in old_quals) or (any(
                    (ins.id, q.render(v)) in new_tokens for q in ins.qualifiers
                    if q.name not in old_quals for v in q.values) and any(
                    f.params[q.name] != q.absent for q in ins.qualifiers
                    if q.name not in old_quals)):
                continue
            for t in old.targets.targets:
                if t.name not in new.targets.by_name:
                    continue
                for v in versions:
                    if not new.targets.get(t.name).exists_at(v):
                        continue
                    if not probed(f.key, t.name, v):
                        continue
                    now = f.support.supported(new.targets, t.name, v)
                    was = of is not None and v in old.targets.versions and t.exists_at(v) \
                        and of.support.supported(old.targets, t.name, v)
                    if now and not was:
                        widened.add(f.key)
                    elif was and not now:
                        narrowed.add(f.key)
    assert widened, "the spec widened support (PTX ISA 6.4 / 6.5, tcgen05 at 8.6)"
    assert sorted(widened - accepted) == []
    assert sorted(narrowed - refused) == []


def test_new_qualifier_values_are_proposed(old_result: ProbeResult) -> None:
    new, old = ptx.instruction_set(), _old()
    old_ids = {i.id for i in old.instructions}
    added = set()
    for ins in new.instructions:
        if ins.id not in old_ids:  # a new instruction is no qualifier-value proposal
            continue
        old_q = {q.name: set(q.values) for q in old.get(ins.id).qualifiers}
        # new values of the qualifiers the old spec has; a qualifier that is new itself
        # (tcgen05.mma .decompress::lut::b, a flag no binary spells: cicc writes
        # "decompress::B") is no candidate value, and the probe does not look for one
        for q in ins.qualifiers:
            if q.name in old_q:
                added |= {(ins.id, q.name, v) for v in q.values if v not in old_q[q.name]}
    proposed = {(p.details["instruction"], p.details["qualifier"], p.details["value"])
                for p in old_result.proposals if p.kind == "qualifier-value"}
    assert added <= proposed
    # the values the final spec records as ptxas 13.5 leniencies of the old spec's
    # instructions were found by the probe (mapa.s32 and the fences are not in the old spec)
    lenient = {(ins.id, q.name, v) for ins in new.instructions if ins.id in old_ids
               for q in ins.qualifiers for v in q.lenient_values}
    assert ("mma_sync", "kind", "ti16") in lenient and ("ldmatrix", "num", "x8") in lenient
    assert lenient <= proposed
    # every proposal quotes the assembler
    assert all(p.ptxas for p in old_result.proposals)


def test_candidate_values_come_from_the_binary(old_result: ProbeResult) -> None:
    """The binary's own strings give candidates (e.g. the tcgen05 collector buffers) and
    the probe assembled them."""
    from ptxgen.probe.propose import binary_tokens

    tokens = binary_tokens(old_result.assembler.path)
    assert ".kind::mxf4nvf4" in tokens and ".collector::b3::lastuse" in tokens
    assert old_result.stats["candidates"] > 0


def test_candidate_values_come_from_cicc_too(old_result: ProbeResult) -> None:
    """ptxas 13.5's strings do not name .kind::ti16; cicc's (found relative to ptxas, in
    the nvidia-nvvm wheel's nvvm/bin) do, and the probe proposes the value with the forms
    ptxas accepts on sm_107a / sm_107f and its message elsewhere."""
    from ptxgen.probe.propose import binary_tokens, toolkit_binaries, toolkit_tokens

    path = old_result.assembler.path
    assert [b.name for b in toolkit_binaries(path)] == ["cicc"]
    assert ".kind::ti16" not in binary_tokens(path)
    assert ".kind::ti16" in toolkit_tokens(path)
    ti16 = [p for p in old_result.proposals if p.kind == "qualifier-value"
            and (p.details["instruction"], p.details["qualifier"], p.details["value"])
            == ("tcgen05_mma", "kind", "ti16")]
    assert len(ti16) == 1, [p.subject for p in old_result.proposals]
    assert "sm_107a" in json.dumps(ti16[0].details) and ti16[0].ptxas


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ptxgen", "probe", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False, env=os.environ.copy())


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``ptxgen probe ARGS`` in this process (its assemblies come from the in-memory cache
    that the probes above filled): (exit status, stdout)."""
    capsys.readouterr()
    code = main(["probe", *args])
    return code, capsys.readouterr().out


def test_command_line_proposes_with_exit_1_and_json(old_result: ProbeResult,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    ptxas = toolkits.require("ptxas", "13.5")
    proc = _cli("--ptxas", ptxas, "--spec", str(OLD_SPEC), "--json", "--jobs", "2",
                "--doc", str(DOC), "--cover")
    assert proc.returncode == 1, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "ptxgen-probe/1" and doc["agree"] is False
    assert doc["exit_code"] == 1 and doc["ptxas"]["release"] == "13.5"
    assert doc["ptxas"]["newest_ptx_isa"] == "9.5" and "sm_107f" in doc["ptxas"]["targets"]
    # --cover tries each new value once (old_result: in every combination)
    assert {p["kind"] for p in doc["proposals"]} == {p.kind for p in old_result.proposals}
    for p in doc["proposals"]:
        assert set(p) == {"kind", "subject", "message", "ptxas", "details"}
    code, out = _main(capsys, "--ptxas", ptxas, "--spec", str(OLD_SPEC), "--doc", str(DOC),
                      "--cover", "--json")
    assert code == 1 and json.loads(out)["proposals"] == doc["proposals"]
    code, out = _main(capsys, "--ptxas", ptxas, "--spec", str(OLD_SPEC), "--doc", str(DOC),
                      "--cover")
    assert code == 1
    assert "target-added     targets.sm_107a" in out
    assert "ptx-isa-version  targets.ptx_isa_versions.9.5" in out


def test_command_line_agrees_but_for_partial_instructions(
        cache: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``ptxgen probe --cover`` with ptxas 13.0 on the spec's logic instructions: what the
    in-process probe finds (proposals only for the instructions the spec has a part of:
    ptxas 13.0 takes ``setp.eq.bf16``, a half-precision setp that setp_op does not have
    yet), exit 1 with proposals and 0 without."""
    spec_copy = spec_subset(tmp_path / "spec", ("logic.yaml",), descriptors=False)
    ptxas = toolkits.require("ptxas", "13.0")
    result = probe(spec_copy, Assembler.open(ptxas), cover=True)
    code, out = _main(capsys, "--ptxas", ptxas, "--cover", "--json", "--spec", str(spec_copy))
    doc = json.loads(out)
    assert doc["proposals"] == json.loads(json.dumps([p.as_dict() for p in result.proposals]))
    partial = {n for i in ptx.instruction_set().instructions if i.partial
               for n in (i.id, i.name)}
    assert all(p["details"].get("instruction") in partial for p in doc["proposals"])
    assert code == doc["exit_code"] == (1 if doc["proposals"] else 0)
    code, out = _main(capsys, "--ptxas", ptxas, "--cover", "--spec", str(spec_copy))
    assert code == doc["exit_code"]
    assert out.startswith("ptxgen probe: ptxas V13.0.")
    assert ("the assembler agrees with the spec: nothing to propose" in out) == (code == 0)


@pytest.mark.parametrize("args", [
    ["--ptxas", "/nonexistent/ptxas"],
    ["--ptxas", shutil.which("true") or "/bin/true"],
    ["--ptxas", "PTXAS", "--jobs", "0"],
    ["--ptxas", "PTXAS", "--spec", "/nonexistent"],
    [],
])
def test_command_line_errors_exit_2(args: list[str]) -> None:
    ptxas = toolkits.require("ptxas", "13.0")
    proc = _cli(*[ptxas if a == "PTXAS" else a for a in args])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("ptxgen: error: ") and len(proc.stderr.splitlines()) == 1
