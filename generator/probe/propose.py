"""``ptxgen probe``: what a ptxas binary says that the spec does not.

The probe reads the assembler's CUDA release, GPU names and newest PTX ISA
version, then compares the spec with it:

1. PTX ISA versions: every X.Y up to the newest that the assembler knows;
   versions after the spec's newest are new versions, versions before its
   oldest count when some form of the spec assembles there.
2. Targets: the first version at which ``.target T`` assembles, for every target
   of the spec and every GPU name of the assembler; a target the spec does not
   know is proposed with the family whose family-specific PTX it runs
   (``.target sm_XYf`` compiled with ``-arch=sm_NEWf``) and the spec target whose
   forms it accepts alike.
3. Forms: every valid form on every (target, version) pair both know, plus the
   spec's newest support carried to new versions and nothing before its oldest;
   near misses (valid forms with one qualifier changed so that the spec calls
   them invalid) at the newest version on every target.
4. Candidate forms (:mod:`ptxgen.probe.candidates`), put into one form of every
   combination: qualifier values the spec has never seen -- tokens of the
   toolkit's binaries' strings that look like a qualifier's values
   (``.kind::xyz``, ``m16n8k96``), the assembler's own and those of cicc found
   next to it (cicc names ``kind::ti16``, ptxas 13.5's strings do not); the
   values same-named qualifiers have; the strings' pairs of spec tokens
   (``.s8.s4``) in a dotted-pair slot; with ``--doc``, every opcode the PTX ISA
   document's syntax blocks and examples write (``.ue8m0`` with
   ``.scale_vec::4X``, ``.f64.rn``); with ``--every-value``, every value the spec
   knows in every qualifier slot and the tokens the strings pair with a known
   value (``.rn.f64``: ``.rn`` after ``.f64``). They are assembled on the
   architecture-specific targets and the newest baseline one at the newest
   version, and those accepted somewhere on every target.

Disagreements are grouped into proposed edits, each with the assembler's
message. The spec's answers are those for the assembler's toolkit (its recorded
deviations applied) when the spec lists that toolkit, else the ISA's rule.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptxgen.model.instructions import Form, Instruction, InstructionSet, vkey
from ptxgen.model.targets import Targets
from ptxgen.probe.assembler import Assembler, Kernel, kernel_for, verify_arch
from ptxgen.probe.candidates import (
    Candidate,
    document_candidates,
    known_value_candidates,
    representatives,
)
from ptxgen.probe.document import opcodes
from ptxgen.probe.matrix import (
    checked_targets,
    covering_plan,
    near_miss_kernel,
    near_misses,
    toolkit_of,
)
from ptxgen.spec_util import parse_target

SCHEMA = "ptxgen-probe/1"
EXIT_AGREE, EXIT_PROPOSE, EXIT_ERROR = 0, 1, 2


@dataclass
class Proposal:
    """One proposed edit of the spec."""

    kind: str  # ptx-isa-version | target-added | target-since | qualifier-value |
    #            qualifier-added | forms-accepted | forms-refused
    subject: str
    message: str
    ptxas: str  # the assembler's own words (an error message, or what assembles)
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "message": self.message,
                "ptxas": self.ptxas, "details": self.details}


@dataclass
class ProbeResult:
    assembler: Assembler
    spec: str
    toolkit: str | None
    proposals: list[Proposal]
    stats: dict[str, Any]

    @property
    def agree(self) -> bool:
        return not self.proposals

    @property
    def exit_code(self) -> int:
        return EXIT_AGREE if self.agree else EXIT_PROPOSE

    def as_dict(self) -> dict[str, Any]:
        a = self.assembler
        return {"schema": SCHEMA,
                "ptxas": {"path": a.path, "release": a.release, "build": a.build,
                          "newest_ptx_isa": a.newest, "targets": list(a.gpu_names)},
                "spec": self.spec, "toolkit": self.toolkit, "agree": self.agree,
                "exit_code": self.exit_code,
                "proposals": [p.as_dict() for p in self.proposals], "stats": self.stats}

    def text(self) -> str:
        a = self.assembler
        tk = (f"the spec's toolkit {self.toolkit} (its deviations applied)" if self.toolkit
              else "the ISA rule (the spec does not list this toolkit)")
        lines = [f"ptxgen probe: ptxas {a.build} (CUDA {a.release}, PTX ISA up to {a.newest}) "
                 f"against {self.spec}, compared with {tk}"]
        s = self.stats
        lines.append(f"assembled {s['kernels']} kernels in {s['runs']} checks over "
                     f"{s['pairs']} (target, version) pairs, {s['near_misses']} near misses, "
                     f"{s['candidates']} candidate qualifier values; {s['seconds']:.0f} s")
        if self.agree:
            lines.append("the assembler agrees with the spec: nothing to propose")
            return "\n".join(lines) + "\n"
        lines.append(f"{len(self.proposals)} proposed edit(s):")
        for p in self.proposals:
            lines.append("")
            lines.append(f"  {p.kind:<16} {p.subject}")
            lines.append(f"      {p.message}")
            lines.append(f"      ptxas: {p.ptxas}")
            for ex in p.details.get("examples", [])[:3]:
                lines.append(f"      e.g. {ex}")
        return "\n".join(lines) + "\n"


# -- helpers -------------------------------------------------------------------------------

_EMPTY = Kernel("(empty kernel)", ())


def _empty(asm: Assembler, target: str, version: str, arch: str) -> tuple[bool, str]:
    """Whether an empty kernel assembles for ``.target`` at ``.version``, and the first
    error (cached like every assembly)."""
    errs = asm.assemble(target, version, arch, [_EMPTY])[_EMPTY.key]
    first = re.sub(r"^ptxas \S+(?: \S+)*, line \d+; \w+\s*: ", "", errs[0]) if errs else ""
    return not errs, first


def _ranges(versions: Sequence[str], order: Sequence[str]) -> str:
    """"8.6-8.7, 9.0" for a sorted subset of ``order``."""
    idx = sorted(order.index(v) for v in versions)
    out: list[str] = []
    i = 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and idx[j + 1] == idx[j] + 1:
            j += 1
        out.append(order[idx[i]] if i == j else f"{order[idx[i]]}-{order[idx[j]]}")
        i = j + 1
    return ", ".join(out)


def _shape(value: str) -> re.Pattern[str] | None:
    """A pattern of values like ``value`` (digits generalised), or None if it has none."""
    if not re.search(r"\d", value) or "." in value:
        return None
    return re.compile(re.sub(r"\\d\+(?:\\d\+)*", r"\\d+", re.sub(r"\d+", r"\\d+",
                                                                    re.escape(value))) + "$")


def _real_binary(path: str) -> Path | None:
    """The binary ``path`` runs: symbolic links resolved, a wrapper script's ``exec``
    line followed (the machine's ``ptxas`` may be ``exec /usr/local/cuda/bin/ptxas``)."""
    try:
        real = Path(path).resolve()
        with real.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    if head[:2] == b"#!":
        m = re.search(rb"exec\s+(\S+)", head)
        if not m:
            return None
        try:
            return Path(m.group(1).decode()).resolve()
        except (OSError, UnicodeDecodeError):
            return None
    return real


@functools.cache
def _dotted_runs(path: str) -> frozenset[str]:
    """The runs of dotted tokens in a binary's strings (``.kind::f16``, ``.s8.s4``), read
    once per binary and process."""
    real = _real_binary(path)
    try:
        data = real.read_bytes() if real is not None else b""
    except OSError:
        return frozenset()
    return frozenset(t.decode() for t in re.findall(
        rb"(?:\.[A-Za-z_][A-Za-z0-9_:]{0,40})+", data))


def binary_tokens(path: str) -> frozenset[str]:
    """The dotted tokens in the assembler binary's strings (``.kind::f16``, ``.x4``)."""
    return frozenset("." + t for run in _dotted_runs(path) for t in run[1:].split("."))


def toolkit_binaries(ptxas: str) -> list[Path]:
    """The toolkit's other binaries whose strings name PTX qualifiers, found relative to
    ``ptxas``: cicc (``<bin>/../nvvm/bin/cicc`` in a CUDA installation and in the
    ``nvidia-nvvm`` wheel, or next to ptxas)."""
    real = _real_binary(ptxas)
    if real is None:
        return []
    found = []
    for cand in (real.parent.parent / "nvvm" / "bin" / "cicc", real.parent / "cicc"):
        if cand.is_file() and cand not in found:
            found.append(cand)
    return found


@functools.cache
def toolkit_tokens(ptxas: str) -> frozenset[str]:
    """Candidate qualifier tokens of a toolkit: the dotted tokens of ptxas's strings, and
    the whole-word ``name::value`` tokens of cicc's (written with a leading dot): cicc
    names qualifier values that ptxas's strings do not (``kind::ti16`` in CUDA 13.4 and
    13.5). A cicc token must stand alone (between NULs, blanks, quotes or punctuation),
    so that fragments of its packed string tables do not become candidates. Read once per
    toolkit and process (a scan of cicc's 100 MB is seconds)."""
    tokens = set(binary_tokens(ptxas))
    for binary in toolkit_binaries(ptxas):
        try:
            data = binary.read_bytes()
        except OSError:
            continue
        tokens |= {"." + t.decode() for t in re.findall(
            rb"[\x00 .'\"(]([a-z][a-z0-9_]{0,20}::[A-Za-z0-9_]{1,20})(?=[\x00 '\",;)])", data)}
    return frozenset(tokens)


def toolkit_pairs(ptxas: str) -> frozenset[str]:
    """The runs of two or three dotted tokens of the assembler's strings (``.s8.s4``,
    ``.rn.f64``)."""
    return frozenset(r for r in _dotted_runs(ptxas) if r.count(".") in (2, 3))


def candidate_values(ins: Instruction, tokens: Iterable[str],
                     siblings: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """{qualifier: values the spec does not give it} from the binary's tokens that match
    its text and the shape of its values, and the values of same-named qualifiers."""
    out: dict[str, list[str]] = {}
    toks = list(tokens)
    for q in ins.qualifiers:
        if q.flag or q.numeric or "{}" not in q.text:
            continue
        pre, _, post = q.text.partition("{}")
        known = set(q.values) | set(q.lenient_values)
        shapes = [p for p in (_shape(v) for v in q.values) if p is not None]
        found: set[str] = set()
        for t in toks:
            if not (t.startswith(pre) and t.endswith(post)) or len(t) <= len(pre) + len(post):
                continue
            v = t[len(pre):len(t) - len(post)] if post else t[len(pre):]
            if v in known or "." in v:
                continue
            if pre != "." or any(p.match(v) for p in shapes):
                found.add(v)
        found |= {v for v in siblings.get(q.name, set()) if v not in known}
        found = {v for v in found if re.fullmatch(r"[A-Za-z0-9_:]+", v)}
        if found:
            out[q.name] = sorted(found)
    return out


# -- the probe --------------------------------------------------------------------------------

class _Probe:
    def __init__(self, iset: InstructionSet, asm: Assembler, spec: str, jobs: int,
                 doc: Sequence[tuple[str, str]] = (), every_value: bool = False,
                 cover: bool = False, sample_candidates: bool = False) -> None:
        self.iset = iset
        self.cover = cover
        self.sample_candidates = sample_candidates
        self.doc = doc
        self.every_value = every_value
        self.asm = asm
        self.spec = spec
        self.jobs = jobs
        self.tk = toolkit_of(iset.targets, asm)
        self.targets: Targets = iset.targets.for_toolkit(self.tk)
        self.proposals: list[Proposal] = []
        self.kernels_run = 0
        self.checks = 0
        self.pool = ThreadPoolExecutor(max_workers=jobs)

    def map(self, fn: Any, items: Sequence[Any]) -> list[Any]:
        self.checks += len(items)
        return list(self.pool.map(lambda x: fn(*x), items))

    # 1. versions
    def versions(self) -> tuple[list[str], list[str], list[str]]:
        major = vkey(self.asm.newest)[0]
        cands = [f"{a}.{b}" for a in range(max(1, major - 4), major + 1) for b in range(10)
                 if vkey(f"{a}.{b}") <= vkey(self.asm.newest)]
        low = self.asm.gpu_names[0] if self.asm.gpu_names else "sm_75"
        low = min(self.asm.gpu_names, key=lambda n: parse_target(n)[0], default=low)
        res = self.map(lambda v: (v, _empty(self.asm, low, v, verify_arch(low))),
                       [(v,) for v in cands])
        known = [v for v, (_, msg) in res if "Unsupported .version" not in msg]
        spec_v = list(self.iset.targets.versions)
        newer = [v for v in known if vkey(v) > vkey(spec_v[-1])]
        # older versions only where the assembler's oldest target exists (no form can
        # assemble before that)
        older = [v for v, (ok, _) in res if ok and vkey(v) < vkey(spec_v[0])]
        for v in newer:
            self.proposals.append(Proposal(
                "ptx-isa-version", f"targets.ptx_isa_versions.{v}",
                f"new PTX ISA version {v}: add it to ptx_isa_versions (and the toolkit that "
                f"writes it to cuda_toolkits)",
                f"ptxas {self.asm.build} assembles `.version {v}`; its newest is "
                f"{self.asm.newest}", {"version": v}))
        return known, older, newer

    # 2. targets
    def target_versions(self, names: Sequence[str], versions: Sequence[str]
                        ) -> dict[str, dict[str, tuple[bool, str]]]:
        arch = {t.name: t.ptxas_arch for t in self.iset.targets.targets}
        items = [(n, v) for n in names for v in versions]
        res = self.map(lambda n, v: (n, v, _empty(self.asm, n, v,
                                                 verify_arch(arch.get(n) or n))), items)
        out: dict[str, dict[str, tuple[bool, str]]] = {}
        for n, v, r in res:
            out.setdefault(n, {})[v] = r
        return out

    def target_first_versions(self, names: Sequence[str], versions: Sequence[str]
                              ) -> dict[str, dict[str, tuple[bool, str]]]:
        """:meth:`target_versions` by bisection (``cover``): a target that exists at the
        newest version is taken to exist from the first version found so on (about five
        empty kernels instead of one per version); the spec's first version of each target
        and the one before are assembled too (a target-since proposal quotes ptxas there),
        and a target that does not exist at the newest version, or whose checked versions
        disagree with the bisection, is tried at every version."""
        arch = {t.name: t.ptxas_arch for t in self.iset.targets.targets}
        since = {t.name: t.since for t in self.iset.targets.targets}

        def one(name: str) -> tuple[str, dict[str, tuple[bool, str]]]:
            a = verify_arch(arch.get(name) or name)
            got: dict[str, tuple[bool, str]] = {}

            def at(i: int) -> bool:
                v = versions[i]
                if v not in got:
                    got[v] = _empty(self.asm, name, v, a)
                return got[v][0]

            lo, hi = 0, len(versions) - 1
            if at(hi):
                while lo < hi:  # the first version that exists is in versions[lo..hi]
                    mid = (lo + hi) // 2
                    if at(mid):
                        hi = mid
                    else:
                        lo = mid + 1
                first = hi
                if name in since and since[name] in versions:
                    i = versions.index(since[name])
                    at(i)
                    if i:
                        at(i - 1)
                if all(ok == (versions.index(v) >= first) for v, (ok, _) in got.items()):
                    refused = next((got[v] for v in versions[:first] if v in got),
                                   (False, ""))
                    return name, {v: got.get(v, (True, "") if i >= first else refused)
                                  for i, v in enumerate(versions)}
            return name, {v: _empty(self.asm, name, v, a) if v not in got else got[v]
                          for v in versions}

        return dict(self.map(one, [(n,) for n in names]))

    def family_of(self, name: str) -> tuple[str, str] | None:
        """(family, the -arch that runs its family-specific PTX) for a new target."""
        sm, _ = parse_target(name)
        arch = f"sm_{sm}f" if f"sm_{sm}f" in self.asm.gpu_names else name
        if not parse_target(arch)[1]:
            return None
        for fam, members in self.iset.targets.families.items():
            base = f"sm_{min(members)}f"
            if base not in self.iset.targets.by_name:
                continue
            ok, _ = _empty(self.asm, base, self.asm.newest, arch)
            if ok:
                return fam, arch
        return None

    # 3. forms
    def observe_split(self, jobs: Sequence[tuple[str, str, str, list[Kernel]]]
                      ) -> dict[tuple[str, str], dict[str, list[str]]]:
        """Like :meth:`observe`, with kernels (and an -arch) of their own per job; the
        results of jobs of one (target, version) are merged."""
        res = self.map(lambda t, v, a, ks: ((t, v), self.asm.assemble(t, v, a, ks)),
                       list(jobs))
        self.kernels_run += sum(len(j[3]) for j in jobs)
        out: dict[tuple[str, str], dict[str, list[str]]] = {}
        for pair, got in res:
            out.setdefault(pair, {}).update(got)
        return out

    def observe(self, pairs: Sequence[tuple[str, str, str]], kernels: list[Kernel]
                ) -> dict[tuple[str, str], dict[str, list[str]]]:
        res = self.map(lambda t, v, a: ((t, v), self.asm.assemble(t, v, a, kernels)),
                       list(pairs))
        self.kernels_run += len(pairs) * len(kernels)
        return dict(res)


def probe(spec_dir: Path, asm: Assembler, jobs: int | None = None,
          iset: InstructionSet | None = None, doc: Sequence[Path] = (),
          every_value: bool = False, cover: bool = False,
          sample_candidates: bool | None = None) -> ProbeResult:
    """Compare ``asm`` with the spec in ``spec_dir``; see the module doc. ``doc``: folders
    or files of the PTX ISA document (Markdown) whose opcodes are candidates too;
    ``every_value``: every known value in every slot and the strings' token pairs (see
    ptxgen.probe.candidates.known_value_candidates); ``cover``: CI's check, the conformance
    matrix's plan of forms (ptxgen.probe.covering: value forms on every pair, the rest of
    each instruction's covering array once) instead of every form on every pair;
    ``sample_candidates`` (default: ``cover``): each new value in one combination's form
    (:func:`_cover_candidates`) instead of in every combination's."""
    start = time.perf_counter()
    if iset is None:
        from ptxgen.pipeline import load_model

        model = load_model(spec_dir).instructions
        if model is None:
            raise ValueError(f"{spec_dir}: the spec has no instructions")
        iset = model
    from ptxgen.probe.document import read_folder

    p = _Probe(iset, asm, str(spec_dir), jobs or os.cpu_count() or 2, read_folder(doc),
               every_value, cover, cover if sample_candidates is None else sample_candidates)
    try:
        stats = _run(p)
    finally:
        p.pool.shutdown()
    stats["seconds"] = round(time.perf_counter() - start, 1)
    return ProbeResult(asm, str(spec_dir), p.tk, p.proposals, stats)


def _run(p: _Probe) -> dict[str, Any]:
    asm, iset = p.asm, p.iset
    full = iset.targets  # the ISA's targets (names, families)
    tt = p.targets  # as the toolkit sees them
    known, older, newer = p.versions()
    spec_versions = [v for v in full.versions if asm.knows(v)]
    order = sorted(set(known) | set(full.versions), key=vkey)
    probe_versions = sorted(set(older) | set(spec_versions) | set(newer), key=vkey)
    spec_names = [t.name for t in full.targets if t.ptxas_arch in asm.gpu_names]
    new_names = [n for n in asm.gpu_names if n not in full.by_name
                 and n not in {t.ptxas_arch for t in full.targets}]
    exist = (p.target_first_versions if p.cover else p.target_versions)(
        spec_names + new_names, probe_versions)

    def asm_exists(name: str, v: str) -> bool:
        return exist[name][v][0]

    # -- targets ---------------------------------------------------------------------------
    for t in tt.targets:
        if t.name not in exist:
            continue
        vs = [v for v in probe_versions if v in full.versions or v in older]
        if t.until is not None:  # renamed: the old name's later life is a known leniency
            vs = [v for v in vs if vkey(v) < vkey(t.until)]
        got = [v for v in vs if asm_exists(t.name, v)]
        want = [v for v in vs if t.exists_at(v)]
        if got and want and got[0] != want[0] and vkey(got[0]) >= vkey(full.versions[0]):
            refused = exist[t.name][want[0]][1] if want[0] not in got else ""
            p.proposals.append(Proposal(
                "target-since", f"targets.{t.name}",
                f"{t.name} exists from PTX ISA {got[0]} (spec: {t.since})",
                refused or f"ptxas {asm.build} assembles `.target {t.name}` at .version "
                f"{got[0]}", {"target": t.name, "since": got[0], "spec_since": t.since}))
    new_first: dict[str, str] = {}
    for n in new_names:
        vs = [v for v in probe_versions if asm_exists(n, v)]
        if vs:
            new_first[n] = vs[0]
    families = {n: p.family_of(n) for n in new_first}

    # -- forms -------------------------------------------------------------------------------
    # cover: the conformance matrix's plan (probe/covering.py), so that the two share
    # their assemblies: value forms on every pair, the rest of the covering arrays at the
    # newest version of their home target, code generation at the home only
    chosen = covering_plan(iset, checked_targets(full, asm), p.tk) if p.cover else None
    forms = chosen.forms if chosen else [f for ins in iset.instructions for f in ins.forms]
    kernels = {f.key: kernel_for(f) for f in forms}
    support = {f.key: f.support_for(p.tk) for f in forms}
    newest_probe = max(probe_versions, key=vkey)
    checked_newest = max(spec_versions, key=vkey)

    def arch_for(name: str, v: str) -> str:
        t = tt.by_name.get(name)
        arch = t.ptxas_arch if t else name
        codegen = v == checked_newest or (
            t is not None and t.until is not None and v == max(
                (x for x in spec_versions if t.exists_at(x)), key=vkey, default=None))
        return arch if codegen else verify_arch(arch)

    pairs: list[tuple[str, str, str]] = []
    for n in spec_names:
        t = tt.get(n)
        for v in probe_versions:
            if not asm_exists(n, v):
                continue
            if v in full.versions and not t.exists_at(v):
                continue  # the target proposal covers it (or a known rename leniency)
            if t.until is not None and vkey(v) >= vkey(t.until):
                continue  # renamed: ptxas's alias of the new name
            pairs.append((n, v, arch_for(n, v)))
    for n, first in new_first.items():
        pairs += [(n, v, verify_arch(n)) for v in probe_versions
                  if vkey(v) >= vkey(first) and asm_exists(n, v)]

    matrices = {f.key: support[f.key].matrix(tt) for f in forms}
    # the hot loop below asks this millions of times: versions as sortable keys, and where
    # each target exists, computed once
    rank = {v: vkey(v) for v in {*probe_versions, *tt.versions, *full.versions,
                                 *(v for m in matrices.values() for v in m.values())}}
    exists_at = {(t.name, v): t.exists_at(v) for t in tt.targets for v in tt.versions}
    older_set, spec_set = set(older), set(tt.versions)

    def expected(f: Form, name: str, v: str) -> bool:
        if v in older_set:
            return False
        at = v if v in spec_set else tt.newest
        first = matrices[f.key].get(name)
        return first is not None and rank[at] >= rank[first] and exists_at[(name, at)]

    # Where a pair is assembled with code generation, the forms the spec does not support
    # there are checked verify-only, as the conformance matrix (ptxgen.probe.matrix) does:
    # ptxas refuses them with the same errors, and the two share these assemblies.
    jobs: list[tuple[str, str, str, list[Kernel]]] = []
    for n, v, arch in pairs:
        here = forms if chosen is None or n not in tt.by_name else \
            chosen.at(n, v, checked_newest)
        if arch.startswith("compute_") or n not in tt.by_name:
            jobs.append((n, v, arch, [kernels[f.key] for f in here]))
            continue
        supported_f = [f for f in here if expected(f, n, v)]
        gen = [kernels[f.key] for f in supported_f if chosen is None or chosen.home[f.key] == n]
        verify = [kernels[f.key] for f in supported_f if chosen is not None
                  and chosen.home[f.key] != n]
        verify += [kernels[f.key] for f in here if not expected(f, n, v)]
        jobs += [(n, v, a, ks) for a, ks in ((arch, gen), (verify_arch(arch), verify)) if ks]
    seen = p.observe_split(jobs)

    diffs: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[Form]] = {}
    early_set: set[str] = set()
    by_pair: dict[str, dict[str, list[str]]] = {}
    for f in forms:
        acc: dict[str, list[str]] = {}
        ref: dict[str, list[str]] = {}
        for n in spec_names:
            for v in probe_versions:
                errs = seen.get((n, v), {}).get(f.key)
                if errs is None:
                    continue
                wanted = expected(f, n, v)
                ok = not errs
                if ok and not wanted:
                    acc.setdefault(n, []).append(v)
                    if v in older:
                        early_set.add(v)
                elif wanted and not ok:
                    ref.setdefault(n, []).append(v)
                    by_pair.setdefault(f.key, {})[f"{n}@{v}"] = errs
        for kind, table in (("forms-accepted", acc), ("forms-refused", ref)):
            if table:
                sig = tuple((n, _ranges(vs, order)) for n, vs in table.items())
                diffs.setdefault((f.instruction.id, kind, sig), []).append(f)
    early = sorted(early_set, key=vkey)
    for v in early:
        p.proposals.append(Proposal(
            "ptx-isa-version", f"targets.ptx_isa_versions.{v}",
            f"PTX ISA {v} is older than the spec's oldest version ({full.versions[0]}) but "
            f"forms of the spec assemble there: add it to ptx_isa_versions (see the "
            f"forms-accepted proposals for the forms)",
            f"ptxas {asm.build} assembles forms at .version {v}", {"version": v}))
    for (ins_id, kind, sig), fs in diffs.items():
        where = "; ".join(f"{n} at {r}" for n, r in sig)
        ex = fs[0]
        if kind == "forms-accepted":
            sup = support[ex.key].matrix(tt)
            spec_says = ", ".join(f"{n} from {sup[n]}" if n in sup else f"{n} never"
                                  for n, _ in sig)
            msg = (f"{ins_id}: {len(fs)} form(s) that the spec does not support there "
                   f"assemble: {where} (spec: {spec_says})")
            words = f"ptxas {asm.build} assembles e.g. {ex.opcode}"
        else:
            msg = f"{ins_id}: {len(fs)} form(s) that the spec supports are refused: {where}"
            errs = next(iter(by_pair.get(ex.key, {}).values()), ["refused"])
            words = " | ".join(errs)
        p.proposals.append(Proposal(kind, f"{ins_id}: {where}", msg, words, {
            "instruction": ins_id, "where": dict(sig), "count": len(fs),
            "examples": [f.key for f in fs[:5]], "forms": [f.key for f in fs]}))

    # -- new targets: which forms, like which spec target ----------------------------------------
    for n, first in new_first.items():
        accepted = {f.key for f in forms if seen.get((n, newest_probe), {}).get(f.key) == []}
        _, suffix = parse_target(n)
        like, extra, missing = None, set(accepted), set()
        for t in tt.targets:
            if t.suffix != suffix or not t.exists_at(tt.newest):
                continue
            theirs = {f.key for f in forms if support[f.key].supported(tt, t.name, tt.newest)}
            if like is None or len(theirs ^ accepted) < len(extra) + len(missing):
                like, extra, missing = t.name, accepted - theirs, theirs - accepted
        found = families.get(n)
        fam = found[0] if found else None
        msg = (f"new target {n} from PTX ISA {first}"
               + (f", family {fam}" if fam else "") +
               f": {len(accepted)} forms assemble at {newest_probe}"
               + (f", as on {like}" if like and not extra and not missing else
                  f", as on {like} with {len(extra)} more and {len(missing)} fewer"
                  if like else ""))
        p.proposals.append(Proposal(
            "target-added", f"targets.{n}", msg,
            f"ptxas {asm.build} assembles `.target {n}` from .version {first}"
            + (f" and `.target sm_{min(full.families[found[0]])}f` PTX for -arch={found[1]}"
               if found else ""),
            {"target": n, "since": first, "family": fam, "like": like,
             "forms": len(accepted), "more": sorted(extra)[:20], "fewer": sorted(missing)[:20]}))

    # -- near misses and candidate values at the newest version ---------------------------------
    probes: list[Kernel] = []
    for ins in iset.instructions:
        probes += [k for _, k, _ in near_misses(ins, toolkit=p.tk)]
    cands = _candidates(p, spec_names)
    last = [(n, v) for n in spec_names + list(new_first)
            for v in [max((x for x in probe_versions if asm_exists(n, x)), key=vkey,
                          default=None)] if v is not None]
    nm_pairs = [(n, v, verify_arch(tt.by_name[n].ptxas_arch if n in tt.by_name else n))
                for n, v in last]
    nm_seen = p.observe(nm_pairs, probes)
    near_acc: dict[str, list[str]] = {}
    for (n, _v), res in nm_seen.items():
        for k in probes:
            if res.get(k.key) == []:
                near_acc.setdefault(k.key, []).append(n)
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for key, tnames in near_acc.items():
        groups.setdefault((key.split(".")[0], tuple(tnames)), []).append(key)
    for (ins_name, names_t), keys in groups.items():
        p.proposals.append(Proposal(
            "forms-accepted", f"{ins_name}: near misses on {', '.join(names_t)}",
            f"{len(keys)} form(s) that the spec's rules call invalid assemble on "
            f"{', '.join(names_t)} at their newest version",
            f"ptxas {asm.build} assembles e.g. {keys[0].split(' <- ')[0]}",
            {"examples": keys[:5], "forms": keys, "targets": list(names_t)}))
    # screened on the spec's architecture-specific targets and its newest baseline one, and
    # on the targets the spec does not have yet (a value only a new target takes, such as
    # .kind::ti16 on sm_107a, is a finding too)
    screen = _screening(tt, spec_names) | set(new_first)
    _propose_candidates(p, cands, [x for x in nm_pairs if x[0] in screen], nm_pairs)
    return {"pairs": len(pairs), "kernels": p.kernels_run, "runs": p.checks,
            "near_misses": len(probes), "candidates": len(cands),
            "versions": known, "new_versions": newer, "older_versions": older}


def _candidates(p: _Probe, spec_names: Sequence[str]) -> list[Candidate]:
    """Every candidate form (ptxgen.probe.candidates): the binary's unknown values, known
    values in every slot, the strings' token pairs and, with --doc, the document's
    opcodes; one per kernel."""
    iset = p.iset
    tokens = toolkit_tokens(p.asm.path)
    pairs = toolkit_pairs(p.asm.path)
    siblings: dict[str, set[str]] = {}
    for ins in iset.instructions:
        for q in ins.qualifiers:
            if not q.flag and not q.numeric:
                siblings.setdefault(q.name, set()).update(q.values)
    known = {part for ins in iset.instructions for q in ins.qualifiers for v in q.values
             for part in v.split(".")}
    doc_ops = opcodes(p.doc, [i.name for i in iset.instructions]) if p.doc else {}
    out: dict[str, Candidate] = {}
    for ins in iset.instructions:
        found: list[Candidate] = []
        for qname, values in candidate_values(ins, tokens, siblings).items():
            for value in values:
                for f in representatives(ins):
                    key, k = near_miss_kernel(ins, f, {**f.params, qname: value})
                    found.append(Candidate(ins.id, key.split(" <- ")[0], k,
                                           ("value", qname, value), "strings"))
        found += known_value_candidates(ins, siblings, pairs, known, p.every_value)
        found += document_candidates(ins, doc_ops.get(ins.name, []))
        for c in found:
            out.setdefault(c.kernel.key, c)
    return _cover_candidates(list(out.values())) if p.sample_candidates else \
        list(out.values())


def _cover_candidates(cands: Sequence[Candidate]) -> list[Candidate]:
    """CI's sample of the candidates: every new value of every qualifier once, each in one
    combination's form (the instruction's values of a qualifier take its combinations in
    turn, so that each combination is tried with some of them); candidates without a new
    value (the document's invalid forms) all. The whole list tries every value in every
    combination's form."""
    by_value: dict[tuple[str, tuple[str, str, str]], list[Candidate]] = {}
    for c in cands:
        if c.new is not None:
            by_value.setdefault((c.instruction, c.new), []).append(c)
    turn: dict[tuple[str, str, str], int] = {}
    keep: set[str] = set()
    for (ins_id, new), group in by_value.items():
        slot = (ins_id, new[0], new[1])
        i = turn.get(slot, 0)
        turn[slot] = i + 1
        keep.add(group[i % len(group)].kernel.key)
    return [c for c in cands if c.new is None or c.kernel.key in keep]


def _screening(tt: Targets, names: Sequence[str]) -> set[str]:
    """The targets a candidate is first tried on: every architecture-specific target and
    the newest baseline one (an architecture's a-target takes its family's and baseline
    features; a later baseline target takes the earlier ones')."""
    out = {n for n in names if tt.get(n).suffix == "a"}
    base = [n for n in names if tt.get(n).suffix == ""]
    return out | set(base[-1:])


def _propose_candidates(p: _Probe, cands: Sequence[Candidate],
                        screen: Sequence[tuple[str, str, str]],
                        every: Sequence[tuple[str, str, str]]) -> None:
    """Assemble the candidates on the screening targets, those accepted somewhere on every
    target (newest version of each), and propose: a new qualifier value, an extra token
    (qualifier-added), and the forms themselves (forms-accepted)."""
    kernels = [c.kernel for c in cands]
    first = p.observe(list(screen), kernels)
    hit = {k for res in first.values() for k, errs in res.items() if errs == []}
    chosen = [c for c in cands if c.kernel.key in hit]
    seen = p.observe(list(every), [c.kernel for c in chosen]) if chosen else {}
    where: dict[str, list[str]] = {}
    for (n, _v), res in seen.items():
        for c in chosen:
            if res.get(c.kernel.key) == []:
                where.setdefault(c.kernel.key, []).append(n)
    by_new: dict[tuple[str, str, str, str], dict[str, list[str]]] = {}
    forms: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for c in chosen:
        names_t = tuple(where.get(c.kernel.key, []))
        if not names_t:
            continue
        if c.opcode not in forms.setdefault((c.instruction, names_t), []):
            forms[(c.instruction, names_t)].append(c.opcode)
        if c.new is not None:
            table = by_new.setdefault((c.instruction, *c.new), {})
            for n in names_t:
                table.setdefault(n, []).append(c.opcode)
    for (ins_id, what, name, value), cwhere in sorted(by_new.items()):
        keys = sorted({k for ks in cwhere.values() for k in ks})
        if what == "value":
            p.proposals.append(Proposal(
                "qualifier-value", f"{ins_id}.{name}: {value}",
                f"new value {value!r} of {ins_id} qualifier {name}: {len(keys)} form(s) "
                f"assemble on {', '.join(cwhere)}",
                f"ptxas {p.asm.build} assembles e.g. {keys[0]}",
                {"instruction": ins_id, "qualifier": name, "value": value,
                 "targets": list(cwhere), "examples": keys[:5], "forms": keys}))
        else:
            after = f"after .{name}" if name else "after the name"
            p.proposals.append(Proposal(
                "qualifier-added", f"{ins_id}: {value} {after}",
                f"new qualifier {value!r} of {ins_id} ({after}, which the spec does not "
                f"have): {len(keys)} form(s) assemble on {', '.join(cwhere)}",
                f"ptxas {p.asm.build} assembles e.g. {keys[0]}",
                {"instruction": ins_id, "after": name, "token": value,
                 "targets": list(cwhere), "examples": keys[:5], "forms": keys}))
    for (ins_id, names_t), keys in forms.items():
        p.proposals.append(Proposal(
            "forms-accepted", f"{ins_id}: candidate forms on {', '.join(names_t)}",
            f"{len(keys)} form(s) that the spec calls invalid or does not know assemble on "
            f"{', '.join(names_t)} at their newest version",
            f"ptxas {p.asm.build} assembles e.g. {keys[0]}",
            {"instruction": ins_id, "examples": keys[:5], "forms": keys,
             "targets": list(names_t)}))


__all__ = ["EXIT_AGREE", "EXIT_ERROR", "EXIT_PROPOSE", "SCHEMA", "ProbeResult", "Proposal",
           "binary_tokens", "candidate_values", "probe", "toolkit_binaries", "toolkit_pairs",
           "toolkit_tokens"]
