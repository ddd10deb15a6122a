"""Stage 3 - model: the typed, immutable model of a validated spec.

The model is one package whose modules name its parts:

* :mod:`ptxgen.model.targets`: SM targets, families, renames, PTX ISA versions and
  CUDA toolkits; target selectors;
* :mod:`ptxgen.model.instructions`: instruction syntax, rules and gating, the valid
  forms they allow and where each is supported;
* :mod:`ptxgen.model.descriptors`: descriptor word layouts and every bit fact;
* :mod:`ptxgen.model.lifetimes`: when each form, instruction and value exists (the
  PTX ISA versions, computed once per instruction);
* :mod:`ptxgen.model.versions`: the spec as of one PTX ISA version (a filter over those
  versions);
* :mod:`ptxgen.model.selection`: the forms a generation compiles into the C++ wrappers
  (``generate --select``);
* :mod:`ptxgen.model.checks`: what only the built model can check (reported at the
  spec's ``file:line:col`` like any validation error).

Every derived fact is computed in the model once, so the emitters and templates only
loop and substitute. This package imports neither YAML nor Jinja nor JSON Schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ptxgen.model.descriptors import Descriptor, DescriptorBuilder, Layout, with_shapes
from ptxgen.model.instructions import InstructionSet, build_instruction_set
from ptxgen.model.targets import Targets, build_targets

if TYPE_CHECKING:
    from ptxgen.load import Document

DESCRIPTOR_SCHEMA = "descriptor.schema.json"
TARGETS_SCHEMA = "targets.schema.json"
INSTRUCTIONS_SCHEMA = "instructions.schema.json"


@dataclass(frozen=True)
class Spec:
    descriptors: tuple[Descriptor, ...]
    spec_files: tuple[str, ...] = field(default=())
    # The instruction side (spec/targets.yaml + spec/instructions): see
    # ptxgen.model.instructions. None when the spec has no instruction files.
    instructions: InstructionSet | None = None
    # spec/targets.yaml (also without instruction files); None when there is none
    targets: Targets | None = field(default=None, compare=False)
    # The views of this spec as of PTX ISA versions, made once each: see
    # ptxgen.model.versions.at.
    views: dict[str, Spec] = field(default_factory=dict, init=False, compare=False,
                                   repr=False)
    # The forms the C++ wrappers compile: a --select pattern (ptxgen.model.selection),
    # None for every form.
    select: str | None = None

    @property
    def layouts(self) -> tuple[Layout, ...]:
        """The baseline layouts of every descriptor (one generated class each)."""
        return tuple(lay for d in self.descriptors for lay in d.layouts)

    @property
    def all_layouts(self) -> tuple[Layout, ...]:
        """The baseline layouts, then every descriptor's variant layouts (the order of
        ``ptxgen.isa.DESCRIPTORS`` followed by that of ``ptxgen.isa.VARIANTS``)."""
        return self.layouts + tuple(lay for d in self.descriptors for v in d.variants
                                    for lay in v.layouts)

    def descriptor(self, name: str) -> Descriptor:
        for d in self.descriptors:
            if d.name == name:
                return d
        raise KeyError(name)


def build_model(docs: list[Document]) -> Spec:
    """Build the model from validated documents (validation must have passed)."""
    descriptor_docs = [d for d in docs if d.schema_name == DESCRIPTOR_SCHEMA]
    descriptors = tuple(DescriptorBuilder(doc).build() for doc in descriptor_docs)
    targets = [d for d in docs if d.schema_name == TARGETS_SCHEMA]
    instr_docs = sorted((d for d in docs if d.schema_name == INSTRUCTIONS_SCHEMA),
                        key=lambda d: d.rel)
    iset = (build_instruction_set(targets[0].data, [(d.rel, d.data) for d in instr_docs])
            if targets and instr_docs else None)
    if iset is not None:
        descriptors = tuple(with_shapes(d, iset) for d in descriptors)
    return Spec(tuple(sorted(descriptors, key=lambda d: d.name)),
                tuple(sorted(doc.rel for doc in docs)), iset,
                build_targets(targets[0].data) if targets else None)


