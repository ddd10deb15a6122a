"""The targets of the spec (``spec/targets.yaml``): SM targets, their families and
renames, the PTX ISA versions, the CUDA toolkits, and target selectors.

Every target knows when it exists (``since``; ``until`` for a renamed one) and the
first versions at which one toolkit's ptxas deviates from the ISA. Imports neither
YAML nor Jinja nor JSON Schema (the generated builders use it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ptxgen.spec_util import cached_property, parse_target, selector_problem, vkey


@dataclass(frozen=True)
class Target:
    name: str
    sm: int
    suffix: str  # "" | "a" | "f"
    since: str
    until: str | None  # first version at which the target no longer exists (renamed)
    family: str | None
    ptxas_arch: str
    nvcc: bool
    renamed_to: str | None = None
    # Toolkits whose ptxas deviates from the ISA on the target's first version:
    # ((toolkit, ...), since), e.g. ((("13.0",), "7.3"),) for sm_88.
    deviations: tuple[tuple[tuple[str, ...], str], ...] = ()

    @property
    def cuda_arch(self) -> int:
        """The value of ``__CUDA_ARCH__`` when compiling for this target."""
        return self.sm * 10

    def exists_at(self, version: str) -> bool:
        v = vkey(version)
        return vkey(self.since) <= v and (self.until is None or v < vkey(self.until))


@dataclass(frozen=True)
class Targets:
    versions: tuple[str, ...]
    targets: tuple[Target, ...]
    families: Mapping[str, tuple[int, ...]]
    suffix_macros: Mapping[str, tuple[str, ...]]
    # (CUDA toolkit, the PTX ISA version its compiler writes), oldest first
    toolkits: tuple[tuple[str, str], ...] = ()
    # the spec data (targets.yaml) they were built from, if any
    data: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def newest(self) -> str:
        return self.versions[-1]

    @cached_property
    def by_name(self) -> dict[str, Target]:
        return {t.name: t for t in self.targets}

    @cached_property
    def and_later(self) -> dict[frozenset[str], int]:
        """Target sets that are exactly "sm_NN and later" (every suffix) -> NN; the
        first (lowest) NN wins when two give the same set."""
        out: dict[frozenset[str], int] = {}
        for t in self.targets:
            if t.suffix == "":
                out.setdefault(self.select(f"sm_{t.sm}+"), t.sm)
        return out

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)

    @cached_property
    def index(self) -> dict[str, int]:
        """{name: position in target order}."""
        return {t.name: i for i, t in enumerate(self.targets)}

    def get(self, name: str) -> Target:
        return self.by_name[name]

    def select(self, selector: str) -> frozenset[str]:
        """The targets a selector names.

        ``sm_NN+``: every target from sm_NN (any suffix); ``sm_NNf``: the
        ``a`` and ``f`` targets of sm_NN's family from sm_NN on; ``sm_NNa``:
        exactly that target.
        """
        memo = self.memo("select")
        hit = memo.get(selector)
        if hit is None:
            hit = memo[selector] = self._select(selector)
        result: frozenset[str] = hit
        return result

    def memo(self, name: str) -> dict[Any, Any]:
        """A per-instance memo of derived facts (the dataclass is frozen; its fields
        never change, so what is derived from them never does)."""
        memos: dict[str, dict[Any, Any]] = self.__dict__.setdefault("_memos", {})
        return memos.setdefault(name, {})

    def matrix(self, names: frozenset[str], since: str | None) -> Mapping[str, str]:
        """{target: first PTX ISA version} of a feature on the targets ``names`` that
        needs PTX ISA ``since`` (None: any version), in target order; computed once per
        (names, since). Read-only: copy it before changing it."""
        memo = self.memo("matrix")
        key = (names, since)
        hit = memo.get(key)
        if hit is None:
            hit = {}
            for t in self.targets:
                if t.name in names:
                    first = self.first_version(t.name, since)
                    if first is not None:
                        hit[t.name] = first
            memo[key] = hit
        result: Mapping[str, str] = hit
        return result

    def arch_from(self, names: frozenset[str]) -> int:
        """The ``__CUDA_ARCH__`` from which a feature on the targets ``names`` is there
        whatever the target: the lowest sm_XY such that every target from sm_XY on (any
        suffix) is in ``names``, as XY0; 0 when there is none (the feature is
        architecture- or family-specific)."""
        memo = self.memo("arch_from")
        hit = memo.get(names)
        if hit is None:
            hit = 0
            for t in sorted((t for t in self.targets if t.suffix == ""), key=lambda t: t.sm):
                if self.select(f"sm_{t.sm}+") <= names:
                    hit = t.cuda_arch
                    break
            memo[names] = hit
        result: int = hit
        return result

    def _select(self, selector: str) -> frozenset[str]:
        problem = selector_problem(selector, self.by_name)
        if problem is not None:
            raise problem
        if selector.endswith("+"):
            sm, _ = parse_target(selector[:-1])
            return frozenset(t.name for t in self.targets if t.sm >= sm)
        sm, suffix = parse_target(selector)
        if suffix == "a":
            return frozenset({selector})
        fam = self.by_name[selector].family
        return frozenset(t.name for t in self.targets
                         if t.family == fam and t.sm >= sm and t.suffix in ("a", "f"))

    @property
    def toolkit_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.toolkits)

    def toolkit_version(self, toolkit: str) -> str:
        """The PTX ISA version the toolkit writes (its newest), from ``cuda_toolkits``."""
        for cuda, ptx_isa in self.toolkits:
            if cuda == toolkit:
                return ptx_isa
        raise KeyError(f"unknown toolkit {toolkit!r}; known: {', '.join(self.toolkit_names)}")

    def for_toolkit(self, toolkit: str | None) -> Targets:
        """The targets as one toolkit's ptxas sees them: its PTX ISA versions (up to the
        one it writes) and the first versions of targets where it deviates from the ISA.
        ``None``: the ISA's rule (self)."""
        if toolkit is None:
            return self
        return _for_toolkit(self, toolkit)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (target, version) pair of the matrix."""
        return [(t.name, v) for t in self.targets for v in self.versions if t.exists_at(v)]

    def first_version(self, target: str, since: str | None) -> str | None:
        """The first version at which ``target`` supports a feature that needs ``since``."""
        t = self.by_name[target]
        first = t.since if since is None or vkey(since) < vkey(t.since) else since
        return first if t.exists_at(first) else None


# The stages of one run (validation, the version checks, the model) build the same
# instructions from the same loaded data; each is built once, so that its forms and
# support matrices (cached on the object) are computed once. Keyed by the identity of
# the input objects, which the memo keeps alive (so an id cannot be reused); bounded.
_MEMO_SIZE = 256
_memo: dict[tuple[Any, ...], tuple[tuple[object, ...], Any]] = {}


def memoized(key_objects: tuple[object, ...], extra: tuple[Any, ...],
             build: Callable[[], Any]) -> Any:
    key = (*map(id, key_objects), *extra)
    hit = _memo.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], key_objects, strict=True)):
        return hit[1]
    value = build()
    if len(_memo) >= _MEMO_SIZE:
        del _memo[next(iter(_memo))]
    _memo[key] = (key_objects, value)
    return value


_toolkit_memo: dict[tuple[int, str], tuple[Targets, Targets]] = {}


def _for_toolkit(targets: Targets, toolkit: str) -> Targets:
    hit = _toolkit_memo.get((id(targets), toolkit))
    if hit is not None and hit[0] is targets:
        return hit[1]
    newest = vkey(targets.toolkit_version(toolkit))
    out = []
    for t in targets.targets:
        since = next((s for tks, s in t.deviations if toolkit in tks), t.since)
        if vkey(since) > newest:
            continue  # a target that came after the toolkit
        out.append(Target(t.name, t.sm, t.suffix, since, t.until, t.family, t.ptxas_arch,
                          t.nvcc, t.renamed_to, t.deviations))
    result = Targets(tuple(v for v in targets.versions if vkey(v) <= newest), tuple(out),
                     targets.families, targets.suffix_macros, targets.toolkits)
    _toolkit_memo[(id(targets), toolkit)] = (targets, result)
    return result


def build_targets(data: Mapping[str, Any]) -> Targets:
    result: Targets = memoized((data,), ("targets",), lambda: _build_targets(data))
    return result


def _build_targets(data: Mapping[str, Any]) -> Targets:
    versions = tuple(data["ptx_isa_versions"])
    fam_of: dict[int, str] = {}
    families: dict[str, tuple[int, ...]] = {}
    for fam in data.get("families", []):
        families[fam["name"]] = tuple(fam["members"])
        for sm in fam["members"]:
            fam_of[sm] = fam["name"]
    renames = {r["from"]: (r["to"], r["version"]) for r in data.get("renames", [])}
    out = []
    for t in data["targets"]:
        sm, suffix = parse_target(t["name"])
        until = renames[sm][1] if sm in renames else None
        renamed = f"sm_{renames[sm][0]}{suffix}" if sm in renames else None
        devs = tuple((tuple(d["toolkits"]), d["since"]) for d in t.get("deviations", ()))
        out.append(Target(t["name"], sm, suffix, t["since"], until,
                          fam_of.get(sm) if suffix or sm in fam_of else None,
                          t.get("ptxas_arch", t["name"]), t.get("nvcc", True), renamed,
                          devs))
    macros = {s["suffix"]: tuple(s["cuda_macros"]) for s in data.get("suffixes", [])}
    toolkits = tuple((r["cuda"], r["ptx_isa"])
                     for r in data.get("cuda_toolkits", {}).get("versions", ()))
    return Targets(versions, tuple(out), families, macros, toolkits, data)
